// Responses and the one mapping from errors to HTTP (wire-format "General wire conventions"):
// handler-raised AppErrors answer `{"error": "<kind>: <message>"}`; what the body extractor
// rejects answers plain text, as Orch8's framework does; anything else is a bare 500.
import { AppError, type ErrorCode } from "../../engine/errors.ts";
import type { Logger } from "../../engine/logger.ts";

/** A rejection of the request before its handler runs (body, query or path): plain text. */
export class Rejection extends Error {
  constructor(
    readonly status: 400 | 413 | 415 | 422,
    message: string,
  ) {
    super(message);
    this.name = "Rejection";
  }
}

const HTTP: Record<Exclude<ErrorCode, "internal">, { status: number; kind: string }> = {
  not_found: { status: 404, kind: "not found" },
  invalid_argument: { status: 400, kind: "invalid argument" },
  already_exists: { status: 409, kind: "already exists" },
  conflict: { status: 409, kind: "conflict" },
  unauthorized: { status: 401, kind: "unauthorized" },
  forbidden: { status: 403, kind: "forbidden" },
  payload_too_large: { status: 413, kind: "payload too large" },
  unprocessable: { status: 422, kind: "unprocessable entity" },
  rate_limited: { status: 429, kind: "rate limit exceeded" },
  unavailable: { status: 503, kind: "unavailable" },
  // A tenant placed on a backend this process does not serve: the storage is not available here.
  unsupported: { status: 503, kind: "unavailable" },
};

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

export function text(status: number, body: string): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
}

export function empty(status = 200): Response {
  return new Response(null, { status });
}

/** Every failure of a request, answered once, here. */
export function errorResponse(error: unknown, log: Logger): Response {
  if (error instanceof Rejection) return text(error.status, error.message);
  if (error instanceof AppError && error.code !== "internal") {
    const { status, kind } = HTTP[error.code];
    // RFC 9110: a 401 names the scheme that would be accepted; a temporary 503 says when to come back.
    const headers: Record<string, string> =
      status === 401 ? { "www-authenticate": "Bearer" } : error.code === "unavailable" ? { "retry-after": "5" } : {};
    return json(status, { error: `${kind}: ${error.message}` }, headers);
  }
  // Logged with its stack for us; the caller learns nothing about it.
  log.error({ err: error }, "request failed");
  return json(500, { error: "internal server error" });
}
