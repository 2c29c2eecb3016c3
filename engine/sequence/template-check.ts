// The editor's check of templates (B.1) and expressions (B.2), browser-safe: the engine's own
// resolver and parser, so a problem reads exactly as the step would fail with it. Templates are
// resolved against an empty scope: only what fails whatever the data is gets reported.
import { parseExpression } from "./expression.ts";
import { FUNCTIONS as EXPRESSION_FUNCTIONS } from "./expression/functions.ts";
import { BARE_FILTERS, CALL_FILTERS, PATH_FUNCTIONS, resolveTemplateStringWith, type ByteCodec } from "./template-core.ts";

/** The browser's bytes; the digest is never shown (checking only), so it need not be real. */
const CHECK_BYTES: ByteCodec = {
  base64: (bytes) => btoa(String.fromCharCode(...bytes)),
  fromBase64: (body) => Uint8Array.from(atob(body.padEnd(Math.ceil(body.length / 4) * 4, "=")), (char) => char.charCodeAt(0)),
  sha256Hex: () => "0".repeat(64),
};

const EMPTY_SCOPE = { context: { data: {}, config: {} }, outputs: {}, instanceId: "", runtime: {}, state: {} };

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The template error the engine would give for `text` with any data, or null. */
export function templateProblem(text: string): string | null {
  if (!text.includes("{{")) return null;
  try {
    resolveTemplateStringWith(CHECK_BYTES, text, EMPTY_SCOPE);
    return null;
  } catch (error) {
    return messageOf(error);
  }
}

/** The syntax error of an expression (a strict `when` fails its step with it), or null. */
export function expressionProblem(text: string): string | null {
  try {
    parseExpression(text);
    return null;
  } catch (error) {
    return messageOf(error);
  }
}

/** What a template may call, for autocomplete: filters go after `|`, functions wrap a path. */
export const TEMPLATE_FILTERS: readonly string[] = [...BARE_FILTERS, ...[...CALL_FILTERS].map((name) => `${name}(…)`)];
export const TEMPLATE_FUNCTIONS: readonly string[] = [...PATH_FUNCTIONS];
export const EXPRESSION_FUNCTION_NAMES: readonly string[] = [...EXPRESSION_FUNCTIONS.keys()];
