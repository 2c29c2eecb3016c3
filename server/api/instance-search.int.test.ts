// instances.list with a search, against a real PostgreSQL: each kind through the member's tenant,
// another tenant's id answered like a random one, and a malformed search a BAD_REQUEST that names
// the field it refuses (before anything is read).
import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shortId } from "../../engine/short-id.ts";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser } from "../../test/factories.ts";
import { createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let tenantA: string;
let tenantB: string;
let member: { id: string };
const ids: Record<string, string> = {};

beforeAll(async () => {
  db = await freshDatabase();
  tenantA = (await makeTenant(db)).id;
  tenantB = (await makeTenant(db)).id;
  member = await makeUser(db, { memberOf: [[tenantA, "member"]] });
  for (const [name, tenantId, order] of [["a1", tenantA, "A-102"], ["a2", tenantA, "A-103"], ["b1", tenantB, "A-102"]] as const) {
    const { rows } = await db.sql.query<{ id: string }>(
      `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context)
       VALUES (gen_random_uuid(), $1, 'default', gen_random_uuid(), 'failed', jsonb_build_object('data', jsonb_build_object('order', $2::text)))
       RETURNING id`,
      [tenantId, order],
    );
    ids[name] = rows[0]!.id;
  }
});
afterAll(() => db.drop());

const list = (search: unknown) =>
  createCaller(createContext(db, member.id)).instances.list({ tenantId: tenantA, search } as Parameters<ReturnType<typeof createCaller>["instances"]["list"]>[0]);

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

describe("instances.list search", () => {
  it("finds by whole id, short id and context field, in the member's tenant only", async () => {
    const found = async (search: unknown) => (await list(search)).items.map((item) => item.id);
    expect(await found({ kind: "id", id: ids.a1 })).toEqual([ids.a1]);
    expect(await found({ kind: "shortId", prefix: shortId(ids.a2!).slice(0, 6) })).toEqual([ids.a2]);
    expect(await found({ kind: "context", path: "data.order", value: "A-102" })).toEqual([ids.a1]);
  });

  it("answers another tenant's whole id exactly as a random one", async () => {
    expect(await list({ kind: "id", id: ids.b1 })).toEqual({ items: [], next: null });
    expect(await list({ kind: "id", id: ids.b1 })).toEqual(await list({ kind: "id", id: randomUUID() }));
  });

  it.each<[string, unknown, string[], RegExp]>([
    ["a path not under data", { kind: "context", path: "order", value: "A-102" }, ["search", "path"], /search\.path must be a path under context\.data/],
    ["a path with a space", { kind: "context", path: "data.or der", value: 1 }, ["search", "path"], /search\.path must be/],
    ["an object for a value", { kind: "context", path: "data.order", value: { a: 1 } }, ["search", "value"], /search\.value must be a string/],
    ["a short id of 3 digits", { kind: "shortId", prefix: "abc" }, ["search", "prefix"], /search\.prefix must be 4 to 12 hex digits/],
    ["an id that is not one", { kind: "id", id: "nope" }, ["search", "id"], /search\.id must be a whole instance id/],
    ["an unknown kind", { kind: "name", name: "x" }, ["search", "kind"], /./],
  ])("refuses %s as BAD_REQUEST naming the field", async (_name, search, path, message) => {
    const error = await refusal(list(search));
    expect(error.code).toBe("BAD_REQUEST");
    const issues = JSON.parse(error.message) as { path: string[]; message: string }[];
    expect(issues).toEqual([expect.objectContaining({ path, message: expect.stringMatching(message) })]);
  });
});
