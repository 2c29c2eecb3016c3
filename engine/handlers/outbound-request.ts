// One guarded HTTP exchange, shared by http_request and llm_call: every hop (the first request
// and each redirect) first takes one of the tenant's slots for its host (waiting for one when the
// tenant is at its bound), is vetted by the outbound guard and connected to the vetted address;
// the whole exchange has one deadline, which runs while a slot is held (waiting for a slot is
// ended only by the step's signal); the response body is capped.
import http from "node:http";
import https from "node:https";
import { addAbortSignal, pipeline, type Readable } from "node:stream";
import zlib from "node:zlib";
import type { HostSlots } from "./host-slots.ts";
import { hostKey, pinnedLookup, vetTarget, type AllowList, type Lookup, type ResolvedAddress } from "./outbound-guard.ts";
import { failure, type HandlerOutcome } from "./types.ts";

/**
 * Bodies above this fail the step permanently rather than being truncated: a cut-off JSON
 * document cannot be parsed, and silently partial data is worse than a clear error.
 */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
export const MAX_REDIRECTS = 5;

export interface OutboundGuard {
  allow: AllowList;
  lookup: Lookup;
  /** Concurrent requests per (tenant, host), shared by every handler that sends. */
  slots: HostSlots;
}

export interface OutboundRequest {
  /** Whose slots the request takes. */
  tenantId: string;
  method: string;
  url: URL;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: Buffer;
  /** The exchange's deadline, counted while it holds a slot (not while it waits for one). */
  timeoutMs: number;
  /** The step's signal (timeout or cancellation). */
  signal: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  statusText: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Parsed JSON when the response says it is JSON and parses, else text. */
  body: unknown;
}

export type OutboundResult = { ok: true; response: OutboundResponse } | { ok: false; retryable: boolean; message: string };

class OutboundFailure extends Error {
  constructor(
    readonly retryable: boolean,
    message: string,
  ) {
    super(message);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Credentials meant for one origin are not forwarded to another one by a redirect. */
const ORIGIN_BOUND_HEADERS = ["authorization", "cookie", "proxy-authorization"];

/**
 * A deadline that only runs while started: paused while a hop waits for a slot, so the wait (which
 * the bound causes, not the target) never turns into a timeout of the request.
 */
class Deadline {
  private remaining: number;
  private since = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    budgetMs: number,
    private readonly expire: () => void,
  ) {
    this.remaining = budgetMs;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.since = performance.now();
    this.timer = setTimeout(this.expire, Math.max(0, this.remaining));
  }

  pause(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.remaining -= performance.now() - this.since;
  }
}

export async function sendOutbound(request: OutboundRequest, guard: OutboundGuard): Promise<OutboundResult> {
  // One controller for both ways to stop, with the reason as a typed failure.
  const controller = new AbortController();
  const deadline = new Deadline(request.timeoutMs, () =>
    controller.abort(new OutboundFailure(true, `request timed out after ${request.timeoutMs} ms`)),
  );
  const onAbort = () => controller.abort(new OutboundFailure(true, "request aborted"));
  if (request.signal.aborted) onAbort();
  else request.signal.addEventListener("abort", onAbort, { once: true });
  try {
    return { ok: true, response: await follow(request, guard, controller.signal, deadline) };
  } catch (error) {
    const cause = controller.signal.aborted ? controller.signal.reason : error;
    if (cause instanceof OutboundFailure) return { ok: false, retryable: cause.retryable, message: cause.message };
    const code = (error as NodeJS.ErrnoException | null)?.code;
    // Only the code: the full message names the socket address.
    if (typeof code === "string") return { ok: false, retryable: true, message: `network error: ${code}` };
    throw error;
  } finally {
    deadline.pause();
    request.signal.removeEventListener("abort", onAbort);
  }
}

async function follow(request: OutboundRequest, guard: OutboundGuard, signal: AbortSignal, deadline: Deadline): Promise<OutboundResponse> {
  let { url, method, body } = request;
  const headers = { ...request.headers };
  for (let redirects = 0; ; redirects++) {
    // Before DNS and the socket; a redirect gives its slot back and takes one for the next host.
    const release = await guard.slots.acquire(request.tenantId, hostKey(url), signal);
    let response: http.IncomingMessage;
    let location: string | undefined;
    try {
      deadline.start();
      const vetted = await abortable(vetTarget(url, guard), signal);
      if (!vetted.ok) throw new OutboundFailure(vetted.retryable, vetted.message);
      response = await exchange(url, method, headers, body, vetted.addresses, signal);
      location = response.headers.location;
      if (!REDIRECTS.has(response.statusCode ?? 0) || location === undefined) {
        return {
          status: response.statusCode ?? 0,
          statusText: response.statusMessage ?? "",
          headers: flattenHeaders(response.headers),
          body: decodeBody(response.headers["content-type"], await readBody(response, signal)),
        };
      }
      response.destroy();
    } finally {
      // The response is read in full (or abandoned) and the request done: the slot is free.
      deadline.pause();
      release();
    }
    if (redirects === MAX_REDIRECTS) throw new OutboundFailure(false, `too many redirects (more than ${MAX_REDIRECTS})`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new OutboundFailure(false, "redirect to an invalid URL");
    }
    if (next.protocol !== "http:" && next.protocol !== "https:") throw new OutboundFailure(false, "redirect to a non-http(s) URL");
    // What browsers do: 303 always, and 301/302 after a POST, continue as a GET without a body.
    if (response.statusCode === 303 || (method === "POST" && (response.statusCode === 301 || response.statusCode === 302))) {
      if (method !== "HEAD") method = "GET";
      body = undefined;
      delete headers["content-type"];
    }
    if (next.origin !== url.origin) for (const name of ORIGIN_BOUND_HEADERS) delete headers[name];
    url = next;
  }
}

function exchange(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  addresses: ResolvedAddress[],
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === "https:" ? https.request : http.request;
    const request = send(url, {
      method,
      headers: body === undefined ? headers : { ...headers, "content-length": String(body.length) },
      // No pooled sockets: a kept-alive socket would skip the vetting of the next request.
      agent: false,
      lookup: pinnedLookup(addresses),
      signal,
    });
    request.once("response", resolve);
    request.on("error", reject); // `on`: a late second error must not become an uncaught exception
    request.end(body);
  });
}

async function readBody(response: http.IncomingMessage, signal: AbortSignal): Promise<Buffer> {
  const tooLarge = () => new OutboundFailure(false, `response body exceeds ${MAX_RESPONSE_BYTES / (1024 * 1024)} MiB`);
  const encoding = response.headers["content-encoding"]?.trim().toLowerCase();
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "deflate"
        ? zlib.createInflate()
        : encoding === "br"
          ? zlib.createBrotliDecompress()
          : null;
  if (decoder === null && Number(response.headers["content-length"]) > MAX_RESPONSE_BYTES) {
    response.destroy();
    throw tooLarge();
  }
  // The cap counts decoded bytes, so a compressed bomb stops at the same size.
  const source: Readable = decoder ? pipeline(response, decoder, () => {}) : response;
  addAbortSignal(signal, source);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      source.destroy();
      response.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function decodeBody(contentType: string | undefined, bytes: Buffer): unknown {
  const text = decodeText(contentType, bytes);
  if (contentType && /^[^;]*[/+]json\s*(;|$)/i.test(contentType)) {
    try {
      return JSON.parse(text);
    } catch {
      // A server that labels garbage as JSON still gets its text returned, not a failure.
    }
  }
  return text;
}

function decodeText(contentType: string | undefined, bytes: Buffer): string {
  const charset = /;\s*charset="?([^";\s]+)/i.exec(contentType ?? "")?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * Status classification shared by the HTTP handlers: 2xx and a final 3xx succeed (null); 429,
 * 408 and 5xx are retryable; any other status is permanent. The message carries the server's
 * own error text when it has one, cut short.
 */
export function statusFailure(response: OutboundResponse): HandlerOutcome | null {
  const { status } = response;
  if (status >= 200 && status < 400) return null;
  const retryable = status === 429 || status === 408 || status >= 500;
  const detail = errorDetail(response.body);
  return failure(retryable, `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ""}${detail ? `: ${detail}` : ""}`, {
    code: "http_status", httpStatus: status,
  });
}

function errorDetail(body: unknown): string {
  let text: unknown = body;
  if (body && typeof body === "object") {
    // OpenAI-style `{ error: { message } }` or `{ error: "..." }`, else the JSON itself.
    const error = (body as { error?: unknown }).error;
    const message = error && typeof error === "object" ? (error as { message?: unknown }).message : error;
    text = typeof message === "string" ? message : JSON.stringify(body);
  }
  return typeof text === "string" ? text.trim().replace(/\s+/g, " ").slice(0, 200) : "";
}
