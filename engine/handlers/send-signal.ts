// `send_signal` (D): queues a signal for another instance of the caller's tenant. Params:
// { instance_id, signal_type (G.1 wire form), payload? }. Output: { signal_id }.
import { AppError, isAppError } from "../errors.ts";
import { decodeSignalType } from "../storage/index.ts";
import { SendSignalParams } from "./coordination-params.ts";
import { TARGET_NOT_FOUND } from "./coordination.ts";
import { failure, paramsObject, success, type Handler } from "./types.ts";

export const sendSignal: Handler = async (input) => {
  const params = paramsObject(input.params) ?? {};
  const parsed = SendSignalParams.safeParse(params);
  if (!parsed.success) {
    // The storage decoder words a bad signal_type as REST does; a bad id reads as a missing target.
    const signal = decodeSignalType(params.signal_type);
    return failure(false, signal.ok ? TARGET_NOT_FOUND : `invalid signal_type: ${signal.reason}`);
  }
  const { instance_id, signal_type, payload } = parsed.data;
  try {
    // The target's state is read under its row lock in the transaction that inserts, so no
    // signal is ever left on a finished instance.
    const { id } = await input.instances.signalInstance(instance_id.toLowerCase(), { type: signal_type, payload: payload ?? null });
    return success({ signal_id: id });
  } catch (error) {
    // The message about a terminal target would confirm that the id exists.
    if (isAppError(error, "not_found") || isAppError(error, "invalid_argument")) return failure(false, TARGET_NOT_FOUND);
    if (error instanceof AppError) return failure(false, error.message);
    throw error;
  }
};
