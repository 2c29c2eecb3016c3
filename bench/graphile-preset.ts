// graphile-worker at its documented best (worker.graphile.org/docs/performance): a local queue of
// 500 jobs and completions batched with no delay. Every bench that runs the peer at its best uses this.
export const BEST_PRESET = { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } };
