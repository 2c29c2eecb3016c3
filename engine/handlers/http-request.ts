// `http_request`: one outbound HTTP call through the SSRF guard.
// Params: { method = GET, url, headers?, body? (string as-is; any other JSON sent as
// application/json), timeout_ms = 30000 }. Output: { status, headers, body }.
import http from "node:http";
import { z } from "zod";
import { sendOutbound, statusFailure, type OutboundGuard } from "./outbound-request.ts";
import { expected, httpUrl, optional, parseParams, timeoutMs } from "./params.ts";
import { success, type Handler } from "./types.ts";

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
/** Framing and routing headers the engine sets itself; a step may not override them. */
const ENGINE_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection"]);

const headerValue = z.union([z.string(), z.number(), z.boolean()], { error: "must be a string" }).transform(String);

const Params = z.object({
  method: optional(z.string({ error: expected("a string") }))
    .transform((method) => (method ?? "GET").toUpperCase())
    .pipe(z.enum(HTTP_METHODS, { error: `must be one of ${HTTP_METHODS.join(", ")}` })),
  url: httpUrl,
  headers: optional(z.record(z.string(), headerValue, { error: expected("an object of header values") })).transform((headers, ctx) => {
    const lowered: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers ?? {})) {
      const key = name.toLowerCase();
      try {
        http.validateHeaderName(key);
        http.validateHeaderValue(key, value);
      } catch {
        ctx.addIssue({ code: "custom", message: "not a valid header", path: [name] });
        return z.NEVER;
      }
      if (ENGINE_HEADERS.has(key)) {
        ctx.addIssue({ code: "custom", message: "set by the engine", path: [name] });
        return z.NEVER;
      }
      lowered[key] = value;
    }
    return lowered;
  }),
  body: z.unknown().optional(),
  timeout_ms: timeoutMs(30_000),
});

export function createHttpRequest(guard: OutboundGuard): Handler {
  return async (input) => {
    const parsed = parseParams(Params, input.params);
    if (!parsed.ok) return parsed.outcome;
    const { method, url, headers, body, timeout_ms } = parsed.value;
    let payload: Buffer | undefined;
    if (typeof body === "string") {
      payload = Buffer.from(body);
      headers["content-type"] ??= "text/plain; charset=utf-8";
    } else if (body !== undefined && body !== null) {
      payload = Buffer.from(JSON.stringify(body));
      headers["content-type"] ??= "application/json";
    }
    const started = performance.now();
    const result = await sendOutbound({ tenantId: input.tenantId, method, url, headers, body: payload, timeoutMs: timeout_ms, signal: input.signal }, guard);
    // Host only: paths and queries may carry secrets.
    input.log.debug(
      { block_id: input.blockId, method, host: url.host, status: result.ok ? result.response.status : null, ms: Math.round(performance.now() - started) },
      "http_request",
    );
    if (!result.ok) return { kind: "failure", retryable: result.retryable, message: result.message };
    const { status, headers: responseHeaders, body: responseBody } = result.response;
    return statusFailure(result.response) ?? success({ status, headers: responseHeaders, body: responseBody });
  };
}
