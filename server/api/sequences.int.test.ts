// The sequences procedures against a real PostgreSQL: create goes through the same validation and
// normalisation as POST /sequences, run starts an instance, members may, non-members are told the
// tenant does not exist.
import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser } from "../../test/factories.ts";
import { createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let tenantA: string;
let tenantB: string;
let member: { id: string };
let outsider: { id: string };

beforeAll(async () => {
  db = await freshDatabase();
  tenantA = (await makeTenant(db)).id;
  tenantB = (await makeTenant(db)).id;
  member = await makeUser(db, { memberOf: [[tenantA, "member"]] });
  outsider = await makeUser(db, { memberOf: [[tenantB, "admin"]] });
});
afterAll(() => db.drop());

const callerFor = (userId: string) => createCaller(createContext(db, userId));

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

const sequence = (overrides: Record<string, unknown> = {}) => ({
  id: randomUUID().toUpperCase(),
  tenant_id: tenantA,
  namespace: "default",
  name: "editor-made",
  version: 1,
  blocks: [
    { type: "parallel", id: "fan", branches: [[{ type: "step", id: "a", handler: "log", params: { message: "a" } }], [{ type: "step", id: "b", handler: "log" }]] },
    { type: "router", id: "pick", routes: [{ condition: "true", blocks: [{ type: "step", id: "c", handler: "noop", timeout: 1.5 }] }], default: [] },
  ],
  created_at: "2026-01-02T03:04:05Z",
  ...overrides,
});

describe("sequences.create", () => {
  it("stores a valid sequence in canonical form, readable back as the REST API answers", async () => {
    const input = sequence();
    const { id, warnings } = await callerFor(member.id).sequences.create({ tenantId: tenantA, sequence: input });
    expect(id).toBe(input.id.toLowerCase());
    expect(warnings).toEqual([]);
    const { sequence: stored, versions } = await callerFor(member.id).sequences.get({ tenantId: tenantA, sequenceId: id });
    expect(stored).toMatchObject({ id, tenant_id: tenantA, name: "editor-made", version: 1, status: "production", deprecated: false, created_at: "2026-01-02T03:04:05.000Z" });
    const step = (stored as unknown as { blocks: { routes: { blocks: Record<string, unknown>[] }[] }[] }).blocks[1]!.routes[0]!.blocks[0]!;
    expect(step).toMatchObject({ timeout: 1500, params: null, cancellable: true, retry: null, delay: null });
    expect(versions).toEqual([{ id, version: 1, status: "production" }]);
    const list = await callerFor(member.id).sequences.list({ tenantId: tenantA });
    expect(list.map((s) => s.id)).toContain(id);
    const handlers = await callerFor(member.id).sequences.handlers({ tenantId: tenantA });
    expect(handlers.builtins).toContain("log");
  });

  it("suggests the handler names the tenant's sequences use, nested and fallbacks included, in one query", async () => {
    const blocks = [
      { type: "parallel", id: "p", branches: [[{ type: "step", id: "a", handler: "crm_sync", fallback_handler: "crm_backup" }], [{ type: "step", id: "b", handler: "log" }]] },
    ];
    await callerFor(member.id).sequences.create({ tenantId: tenantA, sequence: sequence({ name: "uses-handlers", blocks }) });
    const { seen } = await callerFor(member.id).sequences.handlers({ tenantId: tenantA });
    expect(seen).toEqual(expect.arrayContaining(["crm_backup", "crm_sync"]));
    expect(seen).not.toContain("log");
  });

  it("refuses an invalid sequence with the validator's message", async () => {
    const input = sequence({ name: "broken", blocks: [{ type: "step", id: "a", handler: "" }] });
    const error = await trpcError(callerFor(member.id).sequences.create({ tenantId: tenantA, sequence: input }));
    expect(error.code).toBe("BAD_REQUEST");
    expect(error.message).toBe("block `a`: handler name must not be empty");
  });

  it("refuses a sequence for another tenant", async () => {
    const error = await trpcError(callerFor(member.id).sequences.create({ tenantId: tenantA, sequence: sequence({ tenant_id: tenantB }) }));
    expect(error.code).toBe("BAD_REQUEST");
  });

  it("refuses a second sequence with the same name and version", async () => {
    await callerFor(member.id).sequences.create({ tenantId: tenantA, sequence: sequence({ name: "twice" }) });
    const error = await trpcError(callerFor(member.id).sequences.create({ tenantId: tenantA, sequence: sequence({ name: "twice" }) }));
    expect(error.code).toBe("CONFLICT");
    await callerFor(member.id).sequences.create({ tenantId: tenantA, sequence: sequence({ name: "twice", version: 2 }) });
  });

  it("tells non-members the tenant does not exist", async () => {
    const error = await trpcError(callerFor(outsider.id).sequences.create({ tenantId: tenantA, sequence: sequence({ name: "x" }) }));
    expect(error.code).toBe("NOT_FOUND");
    expect((await trpcError(callerFor(outsider.id).sequences.list({ tenantId: tenantA }))).code).toBe("NOT_FOUND");
  });
});

describe("sequences.run", () => {
  it("creates an instance with the input as context.data", async () => {
    const { id } = await callerFor(member.id).sequences.create({ tenantId: tenantA, sequence: sequence({ name: "runnable" }) });
    const { instanceId } = await callerFor(member.id).sequences.run({ tenantId: tenantA, sequenceId: id, input: { who: "world" } });
    const { rows } = await db.sql.query("SELECT tenant_id, sequence_id, state, context FROM task_instances WHERE id = $1", [instanceId]);
    expect(rows[0]).toMatchObject({ tenant_id: tenantA, sequence_id: id, state: "scheduled" });
    expect(rows[0].context.data).toEqual({ who: "world" });
  });

  it("refuses input that does not match the sequence's input_schema, creating nothing", async () => {
    const input_schema = { type: "object", required: ["who"], properties: { who: { type: "string" } } };
    const { id } = await callerFor(member.id).sequences.create({ tenantId: tenantA, sequence: sequence({ name: "typed", input_schema }) });
    const count = async () => (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE sequence_id = $1", [id])).rows[0].n;
    const error = await trpcError(callerFor(member.id).sequences.run({ tenantId: tenantA, sequenceId: id, input: { who: 7 } }));
    expect({ code: error.code, message: error.message }).toEqual({
      code: "UNPROCESSABLE_CONTENT", message: "context.data does not match the sequence's input_schema: /who: must be a string",
    });
    expect(await count()).toBe(0);
    await callerFor(member.id).sequences.run({ tenantId: tenantA, sequenceId: id, input: { who: "world" } });
    expect(await count()).toBe(1);
  });

  it("refuses a 300 KiB input with PAYLOAD_TOO_LARGE, as REST refuses such a context, creating nothing", async () => {
    const { id } = await callerFor(member.id).sequences.create({ tenantId: tenantA, sequence: sequence({ name: "sized" }) });
    const count = async () => (await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE sequence_id = $1", [id])).rows[0].n;
    const error = await trpcError(callerFor(member.id).sequences.run({ tenantId: tenantA, sequenceId: id, input: { blob: "x".repeat(300 * 1024) } }));
    expect(error.code).toBe("PAYLOAD_TOO_LARGE");
    expect(error.message).toMatch(/^context is \d+ bytes, exceeding the maximum of 262144 bytes$/);
    expect(await count()).toBe(0);
  });

  it("does not run another tenant's sequence or a malformed id", async () => {
    const { id } = await callerFor(member.id).sequences.create({ tenantId: tenantA, sequence: sequence({ name: "mine" }) });
    expect((await trpcError(callerFor(outsider.id).sequences.run({ tenantId: tenantB, sequenceId: id }))).code).toBe("NOT_FOUND");
    expect((await trpcError(callerFor(outsider.id).sequences.run({ tenantId: tenantA, sequenceId: id }))).code).toBe("NOT_FOUND");
    expect((await trpcError(callerFor(member.id).sequences.run({ tenantId: tenantA, sequenceId: "nope" }))).code).toBe("NOT_FOUND");
  });
});
