// The tRPC endpoint as app/api/trpc/[trpc]/route.ts serves it: the request-body cap of the
// resource ledger first (1 MiB, a batch counting as one body), then tRPC's fetch adapter.
//
// A body over the cap is refused before anything else runs (no session look-up, no procedure):
// a Content-Length above it is answered at once and the body is never read; a body without one
// (chunked) is read with a running count and cut off as soon as it passes the cap. A body within
// the cap is buffered (never more than the cap) and handed to tRPC as a new Request. The refusal
// is tRPC's own error answer (PAYLOAD_TOO_LARGE, 413, one error per call of a batch), formatted by
// the router's error formatter like any other error.
//
// Anyone but an operator is served the router without the operator procedures (root.ts), and
// each method is served only the procedures it may call (GET: queries, POST: mutations), so a
// procedure asked for by the wrong method gets a missing path's answer too: which procedures exist
// is told by no method or status.
//
// A call refused by its request rate (TOO_MANY_REQUESTS, server/request-rate.ts) also sets the
// response's Retry-After: the longest wait of the refused calls of the batch, in whole seconds.
import { TRPCError, type AnyProcedure, type AnyRouter } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { resolveResponse } from "@trpc/server/http";
import { retryAfterOf } from "../request-rate.ts";
import type { Services } from "../services.ts";
import { appRouter, memberRouter } from "./root.ts";
import { readSessionUser, type SessionIdentity } from "../auth/sessions.ts";
import { createContext, router } from "./trpc.ts";

export const TRPC_ENDPOINT = "/api/trpc";

/** The ledger's tRPC request-body limit (REST's is 10 MiB, server/rest/body.ts). */
export const TRPC_BODY_LIMIT = 1024 * 1024;

export interface TrpcHandlerOptions {
  services: () => Services;
  /** Who the session token says is signed in, asked only once the body is known to fit. */
  session: () => Promise<SessionIdentity | null>;
  /** Bytes; TRPC_BODY_LIMIT unless a test passes another. */
  bodyLimit?: number;
}

/** Serves one tRPC request (a single call or a batch). */
export async function handleTrpcRequest(req: Request, options: TrpcHandlerOptions): Promise<Response> {
  const limit = options.bodyLimit ?? TRPC_BODY_LIMIT;
  const capped = await withCappedBody(req, limit);
  if (capped === null) return payloadTooLarge(req, limit, options.services);
  // The user, if the session is still live: read once here, for the router and for the
  // procedures (signedIn uses it). An ended session is a signed-out caller.
  const user = await readSessionUser(options.services().prisma, await options.session());
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req: capped,
    router: SERVED[user?.isOperator ? "operator" : "member"][req.method === "GET" ? "GET" : "POST"],
    createContext: () => createContext(options.services(), user?.id ?? null, user),
    responseMeta: ({ errors }) => {
      const retryAfter = Math.max(0, ...errors.map((error) => retryAfterOf(error.cause) ?? 0));
      return retryAfter > 0 ? { headers: new Headers({ "retry-after": String(retryAfter) }) } : {};
    },
  });
}

/** The procedures of `source` of the given types, as a router of their own at the same paths. */
function proceduresFor(source: AnyRouter, types: readonly string[]): AnyRouter {
  const tree: Record<string, unknown> = {};
  for (const [path, procedure] of Object.entries(source._def.procedures as Record<string, AnyProcedure>)) {
    if (!types.includes(procedure._def.type)) continue;
    const keys = path.split(".");
    let node = tree;
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[keys.at(-1)!] = procedure;
  }
  return router(tree as Parameters<typeof router>[0]);
}

function byMethod(source: AnyRouter) {
  return { GET: proceduresFor(source, ["query", "subscription"]), POST: proceduresFor(source, ["mutation"]) };
}

const SERVED = { operator: byMethod(appRouter), member: byMethod(memberRouter) };

/**
 * The request with its body read into memory, or null when the body is larger than `limit`: then
 * at most `limit` bytes plus the one chunk that crossed it were read, and the rest is cancelled.
 */
async function withCappedBody(req: Request, limit: number): Promise<Request | null> {
  if (req.body === null) return req;
  if (Number(req.headers.get("content-length")) > limit) {
    // Not one byte read; cancelling tells the server side we will not read it either.
    await req.body.cancel().catch(() => {});
    return null;
  }
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    size += next.value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(next.value);
  }
  return new Request(req, { body: Buffer.concat(chunks, size), signal: req.signal });
}

/** tRPC's answer to the request with a PAYLOAD_TOO_LARGE error for each of its calls. */
function payloadTooLarge(req: Request, limit: number, services: () => Services): Promise<Response> {
  const url = new URL(req.url);
  // The calls are named by the path; the body is gone. JSON is the content type the calls are
  // parsed as whatever the client sent, so the answer is the 413 and never a 415.
  const headers = new Headers(req.headers);
  headers.delete("content-length");
  headers.delete("transfer-encoding");
  headers.set("content-type", "application/json");
  return resolveResponse({
    router: appRouter,
    req: new Request(url, { method: req.method, headers, signal: req.signal }),
    path: trimSlashes(trimSlashes(url.pathname).slice(trimSlashes(TRPC_ENDPOINT).length)),
    error: new TRPCError({
      code: "PAYLOAD_TOO_LARGE",
      message: `request body exceeds the tRPC limit of ${limit} bytes (${formatBytes(limit)})`,
    }),
    // No session is read for a refused request: the context is a visitor's.
    createContext: async () => createContext(services(), null),
  });
}

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, "");
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} B`;
}
