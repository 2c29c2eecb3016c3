"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { useTRPC } from "../../../../_components/trpc";
import { BULK_CALL_LIMIT, type BulkFilter, type BulkKind } from "./bulk-scope";
import { NO_TOTALS, runInCalls, type Totals } from "./run-in-calls";

export interface BulkJob {
  kind: BulkKind;
  filter: BulkFilter;
  /** The dry run's count (at most BULK_CALL_LIMIT): the progress's "of". */
  expected: number;
  /** Reschedule only: the shift, in seconds (negative: earlier). */
  offsetSecs?: number;
}

export type BulkRun =
  | { phase: "idle" }
  | { phase: "running"; job: BulkJob; totals: Totals; stopping: boolean }
  | { phase: "finished"; job: BulkJob; totals: Totals; stopped: boolean; error: string | null };

/** Applies a confirmed bulk job, a call at a time, and refreshes the instance list after it. */
export function useBulkRun(tenantId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const batch = useMutation(trpc.instances.batchAction.mutationOptions());
  const reschedule = useMutation(trpc.instances.bulkReschedule.mutationOptions());
  const [run, setRun] = useState<BulkRun>({ phase: "idle" });
  // A ref, not state: the loop reads it between calls, after the render that set it.
  const stopRequested = useRef(false);

  const start = async (job: BulkJob) => {
    stopRequested.current = false;
    let totals = NO_TOTALS;
    setRun({ phase: "running", job, totals, stopping: false });
    try {
      if (job.kind === "reschedule") {
        // One call moves every match (bulkReschedule has no limit).
        const { count } = await reschedule.mutateAsync({ tenantId, filter: job.filter, offsetSecs: job.offsetSecs ?? 0 });
        totals = { ...NO_TOTALS, applied: count };
        setRun({ phase: "finished", job, totals, stopped: false, error: null });
      } else {
        const action = job.kind;
        const result = await runInCalls(
          () => batch.mutateAsync({ tenantId, action, filter: job.filter, dryRun: false, limit: BULK_CALL_LIMIT }),
          {
            limit: BULK_CALL_LIMIT,
            shouldStop: () => stopRequested.current,
            onProgress: (next) => {
              totals = next;
              setRun({ phase: "running", job, totals, stopping: stopRequested.current });
            },
          },
        );
        setRun({ phase: "finished", job, totals: result.totals, stopped: result.stopped, error: null });
      }
    } catch (error) {
      setRun({ phase: "finished", job, totals, stopped: false, error: error instanceof Error ? error.message : String(error) });
    } finally {
      await queryClient.invalidateQueries({ queryKey: trpc.instances.pathKey() });
    }
  };

  const stop = () => {
    stopRequested.current = true;
    setRun((current) => (current.phase === "running" ? { ...current, stopping: true } : current));
  };

  return { run, start, stop, dismiss: () => setRun({ phase: "idle" }) };
}
