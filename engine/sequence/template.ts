// Templates `{{ … }}` (wire-format B.1) as the engine resolves them: the shared resolver
// (template-core.ts) with Node's bytes (Buffer, node:crypto). Node-only; the editor checks
// templates through template-check.ts.
import { createHash } from "node:crypto";
import { resolveTemplateStringWith, resolveTemplatesWith, type ByteCodec, type Scope } from "./template-core.ts";

export type { Scope } from "./paths.ts";
export { TEMPLATE_LIMITS, templateExpressions } from "./template-core.ts";

const NODE_BYTES: ByteCodec = {
  base64: (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"),
  fromBase64: (body) => Buffer.from(body, "base64"),
  sha256Hex,
};

/**
 * Resolves every string inside `value` (object values and array elements, recursively; keys are
 * not templated; numbers, booleans and null pass through). Returns a new value: resolved objects
 * are copies, so a handler that mutates its params cannot reach the instance context.
 * Throws `AppError("invalid_argument", "template error: …")` with the failing param's path.
 */
export function resolveTemplates(value: unknown, scope: Scope): unknown {
  return resolveTemplatesWith(NODE_BYTES, value, scope);
}

/** One string: the whole-string form keeps the JSON type, anything else yields a string. */
export function resolveTemplateString(template: string, scope: Scope): unknown {
  return resolveTemplateStringWith(NODE_BYTES, template, scope);
}

/** Lowercase hex SHA-256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
