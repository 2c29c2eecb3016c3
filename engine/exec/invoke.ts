// Runs one in-process handler call with its limits: the step timeout, the instance's abort
// (lease lost, shutdown), and a handler that throws or ignores its signal.
import type { Handler, HandlerInput, HandlerOutcome } from "../handlers/types.ts";
import { Interrupt } from "./interrupt.ts";

/** Why a call was cut short by the engine rather than ended by the handler. */
export type Interruption = "lease_lost" | "shutdown" | "cancelled" | "paused";

export type InvokeResult = HandlerOutcome | { kind: "interrupted"; why: Interruption };

export async function invokeHandler(
  handler: Handler,
  input: Omit<HandlerInput, "signal">,
  options: { timeoutMs?: number; interrupt: Interrupt },
): Promise<InvokeResult> {
  const { interrupt, timeoutMs } = options;
  // The handler's signal: the step's own, or with a timeout one that the timeout aborts too.
  const own = timeoutMs === undefined ? interrupt : new Interrupt();
  let settle!: (result: InvokeResult) => void;
  // Resolves on the first of: the handler's own answer, the timeout, an interruption. A handler
  // that ignores its signal cannot hold the instance: its late answer is dropped.
  const settled = new Promise<InvokeResult>((resolve) => (settle = resolve));

  const onInterrupt = () => {
    settle({ kind: "interrupted", why: interrupt.reason as Interruption });
    if (own !== interrupt) own.abort(interrupt.reason);
  };
  const stopListening = interrupt.aborted ? (onInterrupt(), undefined) : interrupt.onAbort(onInterrupt);

  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          settle({ kind: "failure", retryable: true, message: `step timed out after ${timeoutMs} ms`, code: "timeout" });
          own.abort("timeout");
        }, timeoutMs);

  // `signal` is read through a getter: its AbortSignal is made only if the handler uses it.
  handler({ ...input, get signal() { return own.signal; } }).then(settle, (error: unknown) =>
    // A throwing handler is a bug in it, not a verdict on the step: retryable.
    settle({ kind: "failure", retryable: true, message: `handler error: ${error instanceof Error ? error.message : String(error)}`, code: "handler_error" }),
  );
  try {
    return await settled;
  } finally {
    clearTimeout(timer);
    stopListening?.();
  }
}
