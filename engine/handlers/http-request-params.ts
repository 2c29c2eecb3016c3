// http_request's params, browser-safe: the handler parses with this schema and the editor draws
// its form from it. Header checks are the token rules of node's validateHeaderName/Value.
import { z } from "zod";
import { expected, httpUrl, optional, timeoutMs } from "./params.ts";

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
/** Framing and routing headers the engine sets itself; a step may not override them. */
const ENGINE_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection"]);
/** RFC 9110 token, as node checks header names. */
const HEADER_NAME = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
/** What node refuses in a header value (control characters other than tab). */
const BAD_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

const headerValue = z.union([z.string(), z.number(), z.boolean()], { error: "must be a string" }).transform(String);

export const HttpRequestParams = z.object({
  method: optional(z.string({ error: expected("a string") }))
    .transform((method) => (method ?? "GET").toUpperCase())
    .pipe(z.enum(HTTP_METHODS, { error: `must be one of ${HTTP_METHODS.join(", ")}` }))
    // The input side is any string (case-insensitive); the form offers the methods.
    .meta({ description: "HTTP method (default GET)", enum: [...HTTP_METHODS], default: "GET" }),
  url: httpUrl.describe("http(s) URL to call"),
  headers: optional(z.record(z.string(), headerValue, { error: expected("an object of header values") }))
    .transform((headers, ctx) => {
      const lowered: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers ?? {})) {
        const key = name.toLowerCase();
        if (!HEADER_NAME.test(key) || BAD_HEADER_VALUE.test(value)) {
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
    })
    .describe("request headers (name: value)"),
  body: z.unknown().optional().describe("a string is sent as-is, any other JSON as application/json"),
  timeout_ms: timeoutMs(30_000).describe("request deadline in ms (default 30000)"),
});
