// A signal as the API doors queue it (REST POST /instances/{id}/signals, tRPC instances.signal).
import { AppError, notFound } from "../engine/errors.ts";
import { describeInstance, HUMAN_INPUT_SIGNAL } from "../engine/read-model/describe-instance.ts";
import { isTerminal, type NewSignal, type TenantStore } from "../engine/storage/index.ts";

/** The block a `human_input:<block id>` signal answers; null for any other signal. */
function answeredBlock(signal: NewSignal): string | null {
  if (typeof signal.type === "string" || !signal.type.custom.startsWith(HUMAN_INPUT_SIGNAL)) return null;
  return signal.type.custom.slice(HUMAN_INPUT_SIGNAL.length);
}

/**
 * Queues the signal as enqueueSignalIfActive does (404 for a missing or foreign instance, 400 for
 * a terminal one), but refuses with 422, naming the block, a `human_input:<block id>` that no
 * waiting gate of the instance's tree would take: the engine would consume it without effect, so
 * a mistyped block id would pass for an answer.
 */
export async function enqueueApiSignal(store: TenantStore, instanceId: string, signal: NewSignal): Promise<{ id: string }> {
  const blockId = answeredBlock(signal);
  if (blockId !== null) {
    const source = await store.getExecutionTreeSource(instanceId);
    if (!source) throw notFound("instance");
    // A terminal instance is left to enqueue's refusal, which the wire format fixes (400).
    const waiting = describeInstance(source.definition, source.cursor, source.instance).pendingInputs.some((gate) => gate.blockId === blockId);
    if (!waiting && !isTerminal(source.instance.state)) {
      throw new AppError("unprocessable", `block ${JSON.stringify(blockId.slice(0, 256))} of instance ${instanceId} is not waiting for input`, ["signal_type"]);
    }
  }
  return store.enqueueSignalIfActive(instanceId, signal);
}
