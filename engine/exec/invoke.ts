// Runs one in-process handler call with its limits: the step timeout, the instance's abort
// (lease lost, shutdown), and a handler that throws or ignores its signal.
import type { Handler, HandlerInput, HandlerOutcome } from "../handlers/types.ts";

/** Why a call was cut short by the engine rather than ended by the handler. */
export type Interruption = "lease_lost" | "shutdown" | "cancelled" | "paused";

export type InvokeResult = HandlerOutcome | { kind: "interrupted"; why: Interruption };

export async function invokeHandler(
  handler: Handler,
  input: Omit<HandlerInput, "signal">,
  options: { timeoutMs?: number; interrupt: AbortSignal },
): Promise<InvokeResult> {
  // The handler's signal: the caller's interrupt, or with a timeout a signal of its own that the
  // timeout aborts too (an AbortController per call costs more than a no-op step).
  const controller = options.timeoutMs === undefined ? null : new AbortController();
  let settle!: (result: InvokeResult) => void;
  // Resolves on the first of: the handler's own answer, the timeout, an interruption. A handler
  // that ignores its signal cannot hold the instance: its late answer is dropped.
  const settled = new Promise<InvokeResult>((resolve) => (settle = resolve));

  const onInterrupt = () => {
    settle({ kind: "interrupted", why: options.interrupt.reason as Interruption });
    controller?.abort(options.interrupt.reason);
  };
  if (options.interrupt.aborted) onInterrupt();
  else options.interrupt.addEventListener("abort", onInterrupt, { once: true });

  const timer =
    controller === null
      ? undefined
      : setTimeout(() => {
          settle({ kind: "failure", retryable: true, message: `step timed out after ${options.timeoutMs} ms`, code: "timeout" });
          controller.abort("timeout");
        }, options.timeoutMs);

  handler({ ...input, signal: controller?.signal ?? options.interrupt }).then(settle, (error: unknown) =>
    // A throwing handler is a bug in it, not a verdict on the step: retryable.
    settle({ kind: "failure", retryable: true, message: `handler error: ${error instanceof Error ? error.message : String(error)}`, code: "handler_error" }),
  );
  try {
    return await settled;
  } finally {
    clearTimeout(timer);
    options.interrupt.removeEventListener("abort", onInterrupt);
  }
}
