// Deleting a tenant with all of its data, in phases like a move's, each recorded on the primary
// before it runs and each safe to run again, so a deleter that dies anywhere is resumed by
// running the same deletion again:
//   quiesce        API writes answer 503 and schedulers stop claiming the tenant; a grace lets
//                  requests and claims that read the placement just before finish.
//   drain          until no instance of the tenant is running (expired leases are handed back).
//   delete_rows    on every backend, the tenant's rows in batches of their own transactions:
//                  instances with their rows, then every other tenant table.
//   control_plane  the files of its console exports; then memberships, API keys, invitations,
//                  slugs, limits, moves, exports, its audit rows, its placement and the tenant
//                  row, in one transaction. After it the slug
//                  answers as one that never existed.
// A deletion and a move of one tenant never run at once: both hold the tenant's move lock.
import fs from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { AppError, notFound } from "../errors.ts";
import type { DeletionPhase, DeletionRecord, Storage } from "../storage/index.ts";

export interface DeletionOptions {
  /** After quiescing: longer than the engines' placement refresh and a request's duration. */
  graceMs?: number;
  /** How long the drain waits for running steps before the deletion stops (to be resumed). */
  drainTimeoutMs?: number;
  /** Called before each phase runs: progress lines, and tests that stop the deleter there. */
  beforePhase?: (deletion: DeletionRecord, phase: DeletionPhase) => void | Promise<void>;
  /** Each batch of rows deleted: progress lines. */
  onBatch?: (backendId: string, table: string, rows: number) => void | Promise<void>;
  /** Aborted: stop before the next phase, leaving the deletion to be resumed. */
  stop?: AbortSignal;
}

const DEFAULTS = { graceMs: 2_000, drainTimeoutMs: 5 * 60_000 };

/** Records a deletion of the tenant (phase quiesce) without running it, or finds the unfinished one. */
export async function startDeletion(storage: Storage, tenantId: string, requestedBy: string): Promise<DeletionRecord> {
  const active = await storage.deletions.active(tenantId);
  if (active) return active;
  const placement = await storage.moves.placement(tenantId);
  if (!placement) throw notFound("tenant");
  if (await storage.moves.active(tenantId)) throw new AppError("conflict", "the tenant is being moved; finish that move first");
  return storage.deletions.insert({ tenantId, backendId: placement.backendId, epoch: placement.epoch, requestedBy });
}

/** Starts (or resumes) the deletion and runs it to the end in this process. Idempotent. */
export async function deleteTenant(storage: Storage, tenantId: string, requestedBy: string, options: DeletionOptions = {}): Promise<DeletionRecord> {
  return runDeletion(storage, await startDeletion(storage, tenantId, requestedBy), options);
}

/** Runs a recorded deletion from its phase to the end, holding the tenant's move lock. */
export function runDeletion(storage: Storage, recorded: DeletionRecord, options: DeletionOptions = {}): Promise<DeletionRecord> {
  const { deletions } = storage;
  return storage.moves.withLock(recorded.tenantId, async () => {
    let deletion = (await deletions.get(recorded.id)) ?? recorded; // it may have advanced meanwhile
    try {
      while (deletion.phase !== "done" && !options.stop?.aborted) {
        await options.beforePhase?.(deletion, deletion.phase);
        deletion = await runPhase(storage, deletion, { ...DEFAULTS, ...options });
      }
      return deletion;
    } catch (error) {
      await deletions.recordError(deletion.id, (error as Error).message).catch(() => {});
      throw error;
    }
  });
}

async function runPhase(storage: Storage, deletion: DeletionRecord, options: DeletionOptions & typeof DEFAULTS): Promise<DeletionRecord> {
  const { deletions, moves } = storage;
  const { tenantId } = deletion;
  switch (deletion.phase) {
    case "quiesce": {
      if (!(await moves.quiesce(tenantId, deletion.epoch))) {
        throw new AppError("conflict", `the placement changed since the deletion started (epoch ${deletion.epoch})`);
      }
      await sleep(options.graceMs);
      return deletions.advance(deletion.id, "drain");
    }
    case "drain": {
      const deadline = Date.now() + options.drainTimeoutMs;
      for (;;) {
        const running = await deletions.running(deletion.backendId, tenantId, new Date());
        if (running === 0) break;
        if (Date.now() > deadline) throw new AppError("unavailable", `${running} instance(s) still running after ${options.drainTimeoutMs} ms; run the deletion again to resume`);
        await sleep(100);
      }
      return deletions.advance(deletion.id, "delete_rows");
    }
    case "delete_rows": {
      const rows: Record<string, Record<string, number>> = {};
      for (const backendId of deletions.backendIds()) {
        rows[backendId] = await deletions.deleteRows(backendId, tenantId, (table, n) => options.onBatch?.(backendId, table, n));
      }
      return deletions.advance(deletion.id, "control_plane", { rows: mergeRows(deletion.detail.rows, rows) });
    }
    case "control_plane": {
      // Its console exports' files first: their rows are what names them (removing is idempotent).
      for (const dir of await deletions.exportDirs(tenantId)) await fs.rm(dir, { recursive: true, force: true });
      return deletions.deleteControlPlane(deletion);
    }
    case "done":
      return deletion;
  }
}

/** Rows deleted per backend and table, added to what an earlier, interrupted run recorded. */
function mergeRows(before: unknown, now: Record<string, Record<string, number>>): Record<string, Record<string, number>> {
  const merged = structuredClone((before ?? {}) as Record<string, Record<string, number>>);
  for (const [backendId, tables] of Object.entries(now)) {
    for (const [table, n] of Object.entries(tables)) {
      if (n === 0) continue;
      merged[backendId] ??= {};
      merged[backendId][table] = (merged[backendId][table] ?? 0) + n;
    }
  }
  return merged;
}
