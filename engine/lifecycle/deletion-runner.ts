// The engine's part in tenant deletions: the console only records one; engines run it, as they
// run moves (engine/lifecycle/recorded-job-runner.ts).
import type { Logger } from "../logger.ts";
import type { DeletionRecord, Storage } from "../storage/index.ts";
import { runDeletion } from "./delete-tenant.ts";
import { RecordedJobRunner } from "./recorded-job-runner.ts";

export class DeletionRunner extends RecordedJobRunner<DeletionRecord> {
  constructor(storage: Storage, log: Logger, options: { intervalMs?: number; graceMs?: number } = {}) {
    super("deletion", {
      listActive: () => storage.deletions.listActive(),
      runnable: () => true,
      run: async (deletion, stop, jobLog) => {
        const done = await runDeletion(storage, deletion, {
          ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
          stop,
          beforePhase: (_deletion, phase) => jobLog.info({ phase }, "tenant deletion phase"),
        });
        jobLog.info({ phase: done.phase }, done.phase === "done" ? "tenant deleted" : "tenant deletion paused for shutdown");
      },
    }, log, options.intervalMs);
  }
}
