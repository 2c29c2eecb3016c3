// POST /instances/{id}/signals (E.12, G.1): queues a signal; the engine applies it (G.3). A
// human_input answer for a block that is not waiting for input is refused (422).
import { z } from "zod";
import { checkSize } from "../../../engine/size-limits.ts";
import { decodeSignalType } from "../../../engine/storage/index.ts";
import { enqueueApiSignal } from "../../signals.ts";
import { shapedBody } from "../body.ts";
import { json } from "../http.ts";
import { storeOwning, type RestContext } from "../route.ts";

/** G.1: an unknown or CLI-style (`"custom:x"`) signal type is a shape error (422 plain text). */
export const SignalTypeWire = z.unknown().transform((value, ctx) => {
  const decoded = decodeSignalType(value);
  if (decoded.ok) return decoded.type;
  ctx.addIssue({ code: "custom", message: decoded.reason });
  return z.NEVER;
});

const SignalRequest = z.object({
  signal_type: SignalTypeWire,
  payload: z.unknown().default(null),
});
type SignalRequest = z.output<typeof SignalRequest>;

export const signalBody = shapedBody(SignalRequest, () => []);

export async function sendSignal(context: RestContext<SignalRequest>): Promise<Response> {
  const id = context.params.id!;
  const { signal_type: type, payload } = context.body;
  checkSize("signalPayload", payload, { path: ["payload"] }); // 413, as the web app's signals
  const signal = await enqueueApiSignal(await storeOwning(context, "instance", id), id, { type, payload });
  return json(201, { signal_id: signal.id });
}
