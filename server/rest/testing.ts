// Helpers for the REST integration tests: call the dispatcher with real Request objects against a
// test database, and the fixtures most tests need.
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { TestDatabase } from "../../test/db.ts";
import { makeTenant } from "../../test/factories.ts";
import { createApiKey } from "../control/api-keys.ts";
import type { Services } from "../services.ts";
import { handleRest } from "./index.ts";

export interface Reply {
  status: number;
  headers: [string, string][];
  text: string;
  contentType: string | null;
  json(): unknown;
}

export interface CallOptions {
  key?: string;
  /** Sent as JSON with `Content-Type: application/json`. */
  body?: unknown;
  /** Sent as is, with only the headers given. */
  raw?: BodyInit;
  headers?: Record<string, string>;
}

export async function call(db: TestDatabase, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers = new Headers(options.headers);
  if (options.key !== undefined) headers.set("x-api-key", options.key);
  let body: BodyInit | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const request = new Request(`http://bulkhead.test/api/v1${path}`, { method, headers, body, duplex: "half" } as RequestInit);
  const response = await handleRest(request, db);
  const text = response.headers.get("content-type")?.startsWith("text/event-stream") ? await firstEvent(response) : await response.text();
  return {
    status: response.status,
    headers: [...response.headers],
    text,
    contentType: response.headers.get("content-type"),
    json: () => JSON.parse(text),
  };
}

/** A live stream's first event (then the stream is cancelled, as a client going away would). */
async function firstEvent(response: Response): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n\n")) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  await reader.cancel();
  return text.slice(0, text.indexOf("\n\n") + 2);
}

/** Two answers that must be indistinguishable: same status, same headers, same bytes. */
export function expectSameReply(actual: Reply, expected: Reply) {
  expect({ status: actual.status, headers: actual.headers, text: actual.text }).toEqual({
    status: expected.status,
    headers: expected.headers,
    text: expected.text,
  });
}

/** A new tenant and a key of its own. */
export async function tenantWithKey(db: TestDatabase) {
  const tenant = await makeTenant(db);
  const { secret } = await createApiKey(db.prisma, { tenantId: tenant.id });
  return { id: tenant.id, key: secret };
}

export async function operatorKey(db: TestDatabase): Promise<string> {
  return (await createApiKey(db.prisma, { tenantId: null })).secret;
}

/** A valid sequence body (A.1) for `tenantId`; `overrides` replace top-level fields. */
export function sequenceJson(tenantId: string, overrides: Record<string, unknown> = {}) {
  return {
    id: randomUUID(),
    tenant_id: tenantId,
    namespace: "default",
    name: `seq-${randomUUID().slice(0, 8)}`,
    version: 1,
    created_at: "2026-01-02T03:04:05.678Z",
    blocks: [{ type: "step", id: "one", handler: "noop" }],
    ...overrides,
  };
}

/** Creates a sequence through the API and returns its id. */
export async function createSequence(db: TestDatabase, tenant: { id: string; key: string }): Promise<string> {
  const reply = await call(db, "POST", "/sequences", { key: tenant.key, body: sequenceJson(tenant.id) });
  expect(reply.status).toBe(201);
  return (reply.json() as { id: string }).id;
}

/** Creates a sequence of `blocks` through the API and returns its id. */
export async function createSequenceOf(db: TestDatabase, tenant: { id: string; key: string }, blocks: unknown[]): Promise<string> {
  const body = sequenceJson(tenant.id, { blocks });
  const reply = await call(db, "POST", "/sequences", { key: tenant.key, body });
  expect(reply.status, reply.text).toBe(201);
  return body.id;
}

/** An instance's state, read directly. */
export const instanceState = async (db: TestDatabase, id: string): Promise<string> =>
  (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state;

/** Creates an instance through the API and returns its id. */
export async function createInstance(db: TestDatabase, tenant: { id: string; key: string }, sequenceId: string, extra: Record<string, unknown> = {}) {
  const reply = await call(db, "POST", "/instances", {
    key: tenant.key,
    body: { sequence_id: sequenceId, tenant_id: tenant.id, namespace: "default", ...extra },
  });
  expect(reply.status).toBe(201);
  return (reply.json() as { id: string }).id;
}

export interface SseEvent {
  event: string;
  data: unknown;
  id?: string;
}

/** An open stream, read event by event; `close` aborts the request as a client going away does. */
export async function openStream(services: Services, path: string, key: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const request = new Request(`http://bulkhead.test/api/v1${path}`, { headers: { "x-api-key": key, ...headers }, signal: abort.signal });
  const response = await handleRest(request, services);
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const decoder = new TextDecoder();
  let buffer = "";
  let ended = false;
  /** The next event (keep-alive comments skipped), or null once the stream has ended. */
  const next = async (timeoutMs = 5_000): Promise<SseEvent | null> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (block.startsWith(":")) continue;
        const lines = Object.fromEntries(block.split("\n").map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]));
        return { event: lines.event!, data: JSON.parse(lines.data!), ...(lines.id ? { id: lines.id } : {}) };
      }
      if (ended) return null;
      if (Date.now() > deadline) throw new Error(`no event within ${timeoutMs} ms`);
      reader ??= response.body!.getReader();
      const chunk = await reader.read();
      if (chunk.done) ended = true;
      else buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
  return { response, next, close: () => abort.abort() };
}
