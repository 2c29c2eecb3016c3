// Params validation for the handlers that can reject their params (http_request, llm_call).
// Invalid params are a permanent failure: retrying the same params gives the same answer.
import { z } from "zod";
import { failure, paramsObject, type HandlerOutcome } from "./types.ts";

/** Optional param: `null` reads as absent (wire-format A.3: templates can resolve to null). */
export function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value) => value ?? undefined);
}

/** Message for a missing or mistyped field: "required" when absent. */
export const expected = (what: string) => (issue: { input: unknown }) => (issue.input === undefined ? "required" : `must be ${what}`);

export const httpUrl = z.string({ error: expected("a string") }).transform((raw, ctx) => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    ctx.addIssue({ code: "custom", message: "not a valid URL" });
    return z.NEVER;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    ctx.addIssue({ code: "custom", message: "scheme must be http or https" });
    return z.NEVER;
  }
  return url;
});

export const timeoutMs = (fallback: number) =>
  optional(z.number({ error: "must be a number of milliseconds" }).positive("must be > 0").max(2 ** 31 - 1, "too large")).transform(
    (value) => Math.ceil(value ?? fallback),
  );

/** Parses `input.params` with `schema`, or gives the permanent failure that names the first problem. */
export function parseParams<T extends z.ZodType>(schema: T, params: unknown): { ok: true; value: z.output<T> } | { ok: false; outcome: HandlerOutcome } {
  const object = paramsObject(params);
  if (object === null) return { ok: false, outcome: failure(false, "invalid params: expected an object") };
  const parsed = schema.safeParse(object);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  return { ok: false, outcome: failure(false, `invalid params: ${where}${issue.message}`) };
}
