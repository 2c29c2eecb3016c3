// The editor's server drafts and version actions over tRPC, on a real PostgreSQL: a draft is kept
// per tenant and edited version, a later edit wins over an earlier one, and another tenant's
// drafts and versions are out of reach (its members are told the tenant does not exist).
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
let memberA: { id: string };
let memberB: { id: string };

beforeAll(async () => {
  db = await freshDatabase();
  tenantA = (await makeTenant(db)).id;
  tenantB = (await makeTenant(db)).id;
  memberA = await makeUser(db, { memberOf: [[tenantA, "member"]] });
  memberB = await makeUser(db, { memberOf: [[tenantB, "member"]] });
});
afterAll(() => db.drop());

const callerFor = (userId: string) => createCaller(createContext(db, userId));

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

const doc = (name: string) => ({ id: randomUUID(), tenant_id: tenantA, namespace: "default", name, version: 1, blocks: [] });

describe("sequenceDrafts", () => {
  it("keeps a draft per edited version: saved, read back, replaced by a later edit, not by an earlier one, then discarded", async () => {
    const a = callerFor(memberA.id);
    const key = randomUUID().toUpperCase();
    expect(await a.sequenceDrafts.get({ tenantId: tenantA, key })).toBeNull();
    const first = doc("first");
    await a.sequenceDrafts.save({ tenantId: tenantA, key, definition: first, updatedAt: "2026-12-01T10:00:00.000Z" });
    expect(await a.sequenceDrafts.get({ tenantId: tenantA, key: key.toLowerCase() })).toEqual({ definition: first, updatedAt: "2026-12-01T10:00:00.000Z" });

    const later = doc("later");
    await a.sequenceDrafts.save({ tenantId: tenantA, key, definition: later, updatedAt: "2026-12-01T10:00:05.000Z" });
    const stale = await a.sequenceDrafts.save({ tenantId: tenantA, key, definition: doc("stale"), updatedAt: "2026-12-01T09:59:00.000Z" });
    expect(stale.updatedAt).toBe("2026-12-01T09:59:00.000Z");
    expect((await a.sequenceDrafts.get({ tenantId: tenantA, key }))?.definition).toEqual(later);

    // Another sequence's draft is a draft of its own.
    const other = randomUUID();
    await a.sequenceDrafts.save({ tenantId: tenantA, key: other, definition: first, updatedAt: "2026-12-01T10:00:00.000Z" });
    await a.sequenceDrafts.discard({ tenantId: tenantA, key });
    expect(await a.sequenceDrafts.get({ tenantId: tenantA, key })).toBeNull();
    expect((await a.sequenceDrafts.get({ tenantId: tenantA, key: other }))?.definition).toEqual(first);
  });

  it("refuses keys that are not a UUID", async () => {
    for (const key of ["../x", "new", ""]) expect((await trpcError(callerFor(memberA.id).sequenceDrafts.get({ tenantId: tenantA, key }))).code).toBe("BAD_REQUEST");
  });

  it("keeps tenants apart: another tenant's member reads and discards nothing of this tenant's, and asking in its name is NOT_FOUND", async () => {
    const key = randomUUID();
    await callerFor(memberA.id).sequenceDrafts.save({ tenantId: tenantA, key, definition: doc("mine"), updatedAt: new Date().toISOString() });
    const b = callerFor(memberB.id);
    expect(await b.sequenceDrafts.get({ tenantId: tenantB, key })).toBeNull();
    await b.sequenceDrafts.discard({ tenantId: tenantB, key });
    expect((await trpcError(b.sequenceDrafts.get({ tenantId: tenantA, key }))).code).toBe("NOT_FOUND");
    expect(await callerFor(memberA.id).sequenceDrafts.get({ tenantId: tenantA, key })).not.toBeNull();
    const { rows } = await db.sql.query("SELECT tenant_id FROM sequence_drafts WHERE draft_key = $1", [key]);
    expect(rows).toEqual([{ tenant_id: tenantA }]);
  });
});

describe("sequences.versions, deprecate and remove", () => {
  it("lists every version of the name (deprecated ones marked), deprecates, and refuses to delete a version an instance still runs on", async () => {
    const a = callerFor(memberA.id);
    const name = `seq-${randomUUID().slice(0, 8)}`;
    const v1 = doc(name);
    const v2 = { ...doc(name), version: 2 };
    for (const sequence of [v1, v2]) {
      await a.sequences.create({ tenantId: tenantA, sequence: { ...sequence, blocks: [{ type: "step", id: "one", handler: "noop" }], created_at: new Date().toISOString() } });
    }
    await a.sequences.deprecate({ tenantId: tenantA, sequenceId: v1.id });
    const listed = await a.sequences.versions({ tenantId: tenantA, sequenceId: v2.id });
    expect(listed.map((v) => [v.version, v.deprecated])).toEqual([[2, false], [1, true]]);

    await a.sequences.run({ tenantId: tenantA, sequenceId: v2.id, input: null });
    const refused = await trpcError(a.sequences.remove({ tenantId: tenantA, sequenceId: v2.id }));
    expect(refused.code).toBe("CONFLICT");
    expect(refused.message).toBe(`cannot delete sequence ${v2.id}: 1 active instance(s) still reference it`);
    await a.sequences.remove({ tenantId: tenantA, sequenceId: v1.id });
    expect((await a.sequences.versions({ tenantId: tenantA, sequenceId: v2.id })).map((v) => v.version)).toEqual([2]);

    // Another tenant's member cannot touch it: the id is missing in their tenant.
    const b = callerFor(memberB.id);
    expect((await trpcError(b.sequences.remove({ tenantId: tenantB, sequenceId: v2.id }))).code).toBe("NOT_FOUND");
    expect((await trpcError(b.sequences.deprecate({ tenantId: tenantB, sequenceId: v2.id }))).code).toBe("NOT_FOUND");
  });
});
