// `send_signal` (D): queues a signal for another instance of the caller's tenant. Params:
// { instance_id, signal_type (G.1 wire form), payload? }. Output: { signal_id }.
import { AppError, isAppError } from "../errors.ts";
import { decodeSignalType } from "../storage/index.ts";
import { TARGET_NOT_FOUND, targetId } from "./coordination.ts";
import { failure, paramsObject, success, type Handler } from "./types.ts";

export const sendSignal: Handler = async (input) => {
  const params = paramsObject(input.params) ?? {};
  const signal = decodeSignalType(params.signal_type);
  if (!signal.ok) return failure(false, `invalid signal_type: ${signal.reason}`);
  const target = targetId(params);
  if (!target) return failure(false, TARGET_NOT_FOUND);
  try {
    // The target's state is read under its row lock in the transaction that inserts, so no
    // signal is ever left on a finished instance.
    const { id } = await input.instances.signalInstance(target, { type: signal.type, payload: params.payload ?? null });
    return success({ signal_id: id });
  } catch (error) {
    // The message about a terminal target would confirm that the id exists.
    if (isAppError(error, "not_found") || isAppError(error, "invalid_argument")) return failure(false, TARGET_NOT_FOUND);
    if (error instanceof AppError) return failure(false, error.message);
    throw error;
  }
};
