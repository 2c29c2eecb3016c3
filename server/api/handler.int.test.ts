// The tRPC endpoint's body cap (1 MiB), through the handler app/api/trpc/[trpc]/route.ts calls,
// against a real PostgreSQL: an oversized body is refused with tRPC's own 413 answer before it is
// read (Content-Length) or as soon as it passes the cap (chunked), and calls that fit work as before.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser, sessionOf } from "../../test/factories.ts";
import type { SessionIdentity } from "../auth/sessions.ts";
import { handleTrpcRequest, TRPC_BODY_LIMIT } from "./handler.ts";

const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;

let db: TestDatabase;
let tenantId: string;
let member: { id: string };
let memberSession: SessionIdentity;
/** How many times the handler asked for the session. */
let sessionReads = 0;

beforeAll(async () => {
  db = await freshDatabase();
  tenantId = (await makeTenant(db)).id;
  member = await makeUser(db, { memberOf: [[tenantId, "member"]] });
  memberSession = await sessionOf(db, member.id);
});
afterAll(() => db.drop());

function handle(req: Request, bodyLimit?: number) {
  return handleTrpcRequest(req, {
    services: () => db,
    session: async () => {
      sessionReads++;
      return memberSession;
    },
    bodyLimit,
  });
}

/** A body of `total` bytes that is produced only as it is read, counting what was pulled. */
function countingBody(total: number) {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= total) return controller.close();
        const size = Math.min(CHUNK, total - pulled);
        pulled += size;
        controller.enqueue(new Uint8Array(size).fill(0x20)); // JSON whitespace
      },
    },
    { highWaterMark: 0 }, // nothing is pulled before someone reads
  );
  return { stream, pulled: () => pulled };
}

function post(path: string, body: BodyInit, headers: Record<string, string> = {}) {
  return new Request(`http://localhost/api/trpc/${path}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
    duplex: "half",
  } as RequestInit);
}

const sequence = (name = `small-${randomUUID().slice(0, 8)}`) => ({
  id: randomUUID(),
  tenant_id: tenantId,
  namespace: "default",
  name,
  version: 1,
  blocks: [{ type: "step", id: "a", handler: "noop" }],
  created_at: "2026-01-02T03:04:05Z",
});

const tooLarge = (path: string) => ({
  error: {
    message: "request body exceeds the tRPC limit of 1048576 bytes (1 MiB)",
    code: -32013,
    data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 413, path, inputPath: null },
  },
});

describe("the tRPC body cap", () => {
  it("is 1 MiB", () => {
    expect(TRPC_BODY_LIMIT).toBe(MiB);
  });

  it("answers a 20 MiB body with a Content-Length 413 at once, without reading it or the session", async () => {
    const body = countingBody(20 * MiB);
    const reads = sessionReads;
    const started = performance.now();
    const response = await handle(post("sequences.create", body.stream, { "content-length": String(20 * MiB) }));
    const elapsed = performance.now() - started;
    expect(response.status).toBe(413);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual(tooLarge("sequences.create"));
    expect(body.pulled()).toBe(0);
    expect(sessionReads).toBe(reads);
    expect(elapsed).toBeLessThan(200);
    console.info(`20 MiB with Content-Length: 413 in ${elapsed.toFixed(1)} ms, ${body.pulled()} bytes pulled`);
  });

  it("cuts a chunked 2 MiB body off with a 413 as soon as it passes the cap", async () => {
    const body = countingBody(2 * MiB);
    const started = performance.now();
    const response = await handle(post("sequences.create", body.stream));
    const elapsed = performance.now() - started;
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual(tooLarge("sequences.create"));
    // The cap and the one chunk that crossed it, never the rest.
    expect(body.pulled()).toBeGreaterThan(TRPC_BODY_LIMIT);
    expect(body.pulled()).toBeLessThanOrEqual(TRPC_BODY_LIMIT + CHUNK);
    console.info(`2 MiB chunked: 413 in ${elapsed.toFixed(1)} ms, ${body.pulled()} bytes pulled`);
  });

  it("counts a batch as one body, answering each of its calls with the error", async () => {
    const small = JSON.stringify({ tenantId, sequence: sequence() });
    const padded = `{"0":${small},"1":${small}${" ".repeat(TRPC_BODY_LIMIT)}}`; // each call alone fits
    const response = await handle(post("sequences.create,sequences.run?batch=1", padded));
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual([tooLarge("sequences.create"), tooLarge("sequences.run")]);
  });

  it("lets a body of exactly the limit through and refuses one byte more", async () => {
    const limit = 4096;
    const exact = JSON.stringify({ tenantId, sequence: sequence() }).padEnd(limit, " ");
    const fits = await handle(post("sequences.create", exact), limit);
    expect(fits.status).toBe(200);
    const over = await handle(post("sequences.create", JSON.stringify({ tenantId, sequence: sequence() }).padEnd(limit + 1, " ")), limit);
    expect(over.status).toBe(413);
    expect(((await over.json()) as { error: { message: string } }).error.message).toBe("request body exceeds the tRPC limit of 4096 bytes (4 KiB)");
  });

  it("serves calls that fit: a mutation, a query and a batch", async () => {
    const created = await handle(post("sequences.create", JSON.stringify({ tenantId, sequence: sequence("small") })));
    expect(created.status).toBe(200);
    const { result } = (await created.json()) as { result: { data: { id: string; warnings: unknown[] } } };
    expect(result.data.warnings).toEqual([]);

    const input = encodeURIComponent(JSON.stringify({ tenantId, sequenceId: result.data.id }));
    const read = await handle(new Request(`http://localhost/api/trpc/sequences.get?input=${input}`));
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ result: { data: { sequence: { id: result.data.id, name: "small" } } } });

    const batch = await handle(
      post("sequences.create,sequences.create?batch=1", JSON.stringify({ 0: { tenantId, sequence: sequence() }, 1: { tenantId, sequence: sequence() } })),
    );
    expect(batch.status).toBe(200);
    expect(((await batch.json()) as unknown[]).length).toBe(2);
  });
});
