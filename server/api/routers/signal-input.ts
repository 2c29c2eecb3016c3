// A signal as the web app sends it (tRPC), for the signal and resume-from procedures alike, and
// the engine's form of it (wire-format G).
import { z } from "zod";
import type { NewSignal } from "../../../engine/storage/index.ts";

/** update_context merges only the top-level keys of `payload.data` (G.3); anything else would be silently ignored, so it is refused. */
const UpdateContextPayload = z.strictObject({ data: z.record(z.string(), z.json()) });

export const SignalRequest = z.discriminatedUnion("type", [
  z.object({ type: z.enum(["pause", "resume", "cancel"]) }),
  z.object({ type: z.literal("update_context"), payload: UpdateContextPayload }),
  z.object({ type: z.literal("custom"), name: z.string().min(1).max(256), payload: z.json().default(null) }),
]);
export type SignalRequest = z.output<typeof SignalRequest>;

export function toSignal(request: SignalRequest): NewSignal {
  switch (request.type) {
    case "custom":
      return { type: { custom: request.name }, payload: request.payload };
    case "update_context":
      return { type: "update_context", payload: request.payload };
    default:
      return { type: request.type, payload: null };
  }
}
