// The JSON body extractor: what Orch8's framework does before a handler runs, with the same
// plain-text answers (415 not JSON, 413 over the limit, 400 broken JSON, 422 wrong shape).
import { z } from "zod";
import { AppError, isAppError } from "../../engine/errors.ts";
import { isDeeperThan, LIMITS } from "../../engine/sequence/validate.ts";
import { describeTextProblem, unstorableText } from "../../engine/text-hygiene.ts";
import { Rejection } from "./http.ts";
import type { BodySpec } from "./route.ts";

/** The global request-body limit (wire-format: 10 MiB; common Node defaults of 100 KB are too small). */
export const BODY_LIMIT = 10 * 1024 * 1024;

/** `application/json` or `application/<anything>+json`, parameters (charset) allowed. */
function isJson(contentType: string | null): boolean {
  const mime = contentType?.split(";")[0]?.trim().toLowerCase() ?? "";
  return mime === "application/json" || /^application\/[^/]+\+json$/.test(mime);
}

/** Reads and parses the body, streaming it so an oversized one is refused without being buffered whole. */
export async function readJson(request: Request, limit = BODY_LIMIT): Promise<unknown> {
  if (!isJson(request.headers.get("content-type"))) {
    throw new Rejection(415, "Expected request with `Content-Type: application/json`");
  }
  return parseJson(await readBytes(request, limit), (problem) => new Rejection(400, `Failed to parse the request body as JSON: ${problem}`));
}

/** The body's bytes as received; over `limit` a 413 in plain text, before it is buffered whole. */
export async function readBytes(request: Request, limit: number): Promise<Buffer> {
  const tooLarge = () => new Rejection(413, `Failed to buffer the request body: length limit of ${limit} bytes exceeded`);
  if (Number(request.headers.get("content-length")) > limit) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      size += next.value.byteLength;
      if (size > limit) {
        await reader.cancel();
        throw tooLarge();
      }
      chunks.push(next.value);
    }
  }
  return Buffer.concat(chunks);
}

/** JSON from UTF-8 bytes; what cannot be parsed is `broken(problem)`. */
export function parseJson(bytes: Buffer, broken: (problem: string) => Error): unknown {
  let body: string;
  try {
    body = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw broken("invalid UTF-8");
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    throw broken((error as Error).message);
  }
  // JSON.parse takes any depth, but JSON.stringify and every recursive walk after it overflow the
  // stack on a deep enough value: refuse it here, as serde's recursion limit does.
  if (isDeeperThan(json, LIMITS.jsonDepth)) throw broken(`nesting exceeds the maximum depth of ${LIMITS.jsonDepth}`);
  // Text PostgreSQL cannot store is the client's mistake: a 400 naming the field, before anything
  // is read or written (JSON, as the handlers' own invalid-argument answers are).
  const problem = unstorableText(json);
  if (problem) throw new AppError("invalid_argument", describeTextProblem(problem));
  return json;
}

/** `["instances", 0, "sequence_id"]` → `instances[0].sequence_id` */
function formatPath(path: readonly PropertyKey[]): string {
  return path.map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`)).join("");
}

/** Parses `json` with `schema`; a misfit is a 422 in plain text naming where it is. */
export function shape<S extends z.ZodType>(schema: S, json: unknown): z.output<S> {
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = issue.path.length > 0 ? `${formatPath(issue.path)}: ` : "";
  throw new Rejection(422, `Failed to deserialize the JSON body into the target type: ${where}${issue.message}`);
}

/** Required, any JSON, null included: absent is a shape error, as serde answers a missing field. */
export const requiredJson = (name: string) => z.unknown().refine((value) => value !== undefined, `missing field \`${name}\``);

/** The body spec of a zod shape: a misfit is the plain-text 422. */
export function shapedBody<S extends z.ZodType>(
  schema: S, tenants: (body: z.output<S>) => readonly unknown[], options: { optional?: boolean } = {},
): BodySpec<z.output<S>> {
  return { schema, parse: (json) => shape(schema, json), tenants, ...options };
}

/** Runs an engine parser whose `unprocessable` errors are body-shape errors (e.g. parseSequence). */
export function shapeBy<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (isAppError(error, "unprocessable")) {
      throw new Rejection(422, `Failed to deserialize the JSON body into the target type: ${error.message}`);
    }
    throw error;
  }
}

/**
 * A non-negative integer query parameter, `fallback` when absent or empty. Malformed is an
 * extractor rejection: 400 in plain text, as serde's query extractor answers.
 */
export function countParam(query: URLSearchParams, name: string, fallback: number, min: number): number {
  const raw = query.get(name);
  if (raw === null || raw === "") return fallback;
  const value = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min)) throw new Rejection(400, `Failed to deserialize query string: ${name}: expected an integer >= ${min}`);
  return value;
}
