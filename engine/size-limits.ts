// How large a value a caller may hand the engine, serialized as JSON, whatever the door (REST v1,
// the web app's tRPC): over the cap is payload_too_large (413 / PAYLOAD_TOO_LARGE) and nothing is
// stored. Request bodies have their own, larger limit (server/rest/body.ts).
import { AppError } from "./errors.ts";

const KIB = 1024;

/** The caps in bytes. */
export const SIZE_LIMITS = {
  /** An instance's context (wire-format E.5, E.6, E.11); a new instance's `context.data` is inside it. */
  context: 256 * KIB,
  /** A signal's payload: update_context and human input end up in a context. */
  signalPayload: 256 * KIB,
  /** A worker's heartbeat checkpoint (E.19). A worker's complete output is held to the context cap: it is merged into context.data. */
  checkpoint: 256 * KIB,
} as const;

export type SizedKind = keyof typeof SIZE_LIMITS;

/** What the message calls each kind. */
const FIELD: Record<SizedKind, string> = { context: "context", signalPayload: "payload", checkpoint: "checkpoint" };

/** The value's size as JSON text, in UTF-8 bytes (0 for undefined, which has none). */
export function jsonSize(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text);
}

/**
 * Throws payload_too_large when `value` is over its kind's cap, naming the field: `context is
 * 300000 bytes, exceeding the maximum of 262144 bytes`. `path` is where the value sits in the
 * caller's input (default: the field's name); `prefix` starts the message (an item of a batch).
 */
export function checkSize(kind: SizedKind, value: unknown, options: { path?: (string | number)[]; prefix?: string } = {}): void {
  const size = jsonSize(value);
  const limit = SIZE_LIMITS[kind];
  if (size > limit) {
    const field = FIELD[kind];
    throw new AppError("payload_too_large", `${options.prefix ?? ""}${field} is ${size} bytes, exceeding the maximum of ${limit} bytes`, options.path ?? [field]);
  }
}
