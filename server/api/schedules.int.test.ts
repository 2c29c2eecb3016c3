// The Schedules page's procedures on a real PostgreSQL: create (namespace from the sequence),
// list per tenant and per sequence with each schedule's next fires, enable, disable and edit,
// remove, the previews, and another tenant's schedules out of reach.
import { randomUUID } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence, makeTenant, makeUser } from "../../test/factories.ts";
import { createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let tenantA: string;
let tenantB: string;
let memberA: { id: string };
let memberB: { id: string };
let sequenceA: string;
let otherSequenceA: string;
const BLOCKS = [{ type: "step", id: "one", handler: "noop" }];

beforeAll(async () => {
  db = await freshDatabase();
  tenantA = (await makeTenant(db)).id;
  tenantB = (await makeTenant(db)).id;
  memberA = await makeUser(db, { memberOf: [[tenantA, "member"]] });
  memberB = await makeUser(db, { memberOf: [[tenantB, "member"]] });
  sequenceA = await insertSequence(db, tenantA, BLOCKS);
  otherSequenceA = await insertSequence(db, tenantA, BLOCKS);
});
afterAll(() => db.drop());

const callerFor = (userId: string) => createCaller(createContext(db, userId));

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TRPCError);
  return error as TRPCError;
}

describe("schedules", () => {
  it("creates, lists (per tenant and per sequence, with the next 5 fires), edits, disables and removes", async () => {
    const a = callerFor(memberA.id);
    const created = await a.schedules.create({ tenantId: tenantA, sequenceId: sequenceA, cronExpr: "0 0 9 * * MON-FRI", timezone: "America/New_York", overlapPolicy: "skip" });
    expect(created).toMatchObject({ sequenceId: sequenceA, namespace: "default", cronExpr: "0 0 9 * * MON-FRI", timezone: "America/New_York", enabled: true, overlapPolicy: "skip" });
    expect(created.nextFires).toHaveLength(5);
    expect(created.nextFireAt).toBe(created.nextFires[0]);
    await a.schedules.create({ tenantId: tenantA, sequenceId: otherSequenceA, cronExpr: "* * * * *" });

    expect((await a.schedules.list({ tenantId: tenantA })).map((s) => s.sequenceId)).toEqual([sequenceA, otherSequenceA]);
    expect((await a.schedules.list({ tenantId: tenantA, sequenceId: sequenceA })).map((s) => s.id)).toEqual([created.id]);

    const edited = await a.schedules.update({ tenantId: tenantA, id: created.id, cronExpr: "0 30 * * * *", timezone: "UTC" });
    expect(edited).toMatchObject({ cronExpr: "0 30 * * * *", timezone: "UTC", enabled: true, overlapPolicy: "skip" });
    expect(new Date(edited.nextFireAt!).getUTCMinutes()).toBe(30);
    const disabled = await a.schedules.update({ tenantId: tenantA, id: created.id, enabled: false });
    expect(disabled.enabled).toBe(false);
    // A disabled schedule still shows when it would fire.
    expect(disabled.nextFires).toHaveLength(5);

    const fires = await a.schedules.nextFires({ tenantId: tenantA, id: created.id, n: 3 });
    expect(fires.timezone).toBe("UTC");
    expect(fires.fires).toHaveLength(3);

    expect(await a.schedules.remove({ tenantId: tenantA, id: created.id })).toEqual({ removed: true });
    expect((await trpcError(a.schedules.remove({ tenantId: tenantA, id: created.id }))).code).toBe("NOT_FOUND");
    expect((await a.schedules.list({ tenantId: tenantA })).map((s) => s.sequenceId)).toEqual([otherSequenceA]);
    const { rows } = await db.sql.query("SELECT action, actor_user_id FROM audit_log WHERE details ->> 'cron_schedule_id' = $1 ORDER BY id", [created.id]);
    expect(rows).toEqual([
      ...["create", "update", "update", "delete"].map((action) => ({ action: `cron_schedule.${action}`, actor_user_id: memberA.id })),
    ]);
  });

  it("refuses a bad expression or zone with M's words (BAD_REQUEST), and previews a good one", async () => {
    const a = callerFor(memberA.id);
    const bad = await trpcError(a.schedules.create({ tenantId: tenantA, sequenceId: sequenceA, cronExpr: "0 0 * * 0" }));
    expect(bad.code).toBe("BAD_REQUEST");
    expect(bad.message).toBe("invalid cron expression: day of week: 0 is out of range 1-7");
    const zone = await trpcError(a.schedules.preview({ tenantId: tenantA, cronExpr: "* * * * *", timezone: "Nowhere/Land" }));
    expect(zone.code).toBe("BAD_REQUEST");
    expect(zone.message).toMatch(/^invalid timezone: 'Nowhere\/Land'/);
    const preview = await a.schedules.preview({ tenantId: tenantA, cronExpr: "0 0 12 * * *", timezone: "Asia/Kolkata", n: 2 });
    expect(preview.fires).toHaveLength(2);
    for (const fire of preview.fires) expect(fire).toMatch(/T06:30:00\.000Z$/);
  });

  it("keeps tenants apart: another tenant's schedule and sequence are NOT_FOUND like missing ones", async () => {
    const a = callerFor(memberA.id);
    const b = callerFor(memberB.id);
    const sequenceB = await insertSequence(db, tenantB, BLOCKS);
    const theirs = await b.schedules.create({ tenantId: tenantB, sequenceId: sequenceB, cronExpr: "* * * * *" });
    for (const id of [theirs.id, randomUUID()]) {
      const error = await trpcError(a.schedules.update({ tenantId: tenantA, id, enabled: false }));
      expect([error.code, error.message]).toEqual(["NOT_FOUND", "cron schedule not found"]);
    }
    const foreignSequence = await trpcError(a.schedules.create({ tenantId: tenantA, sequenceId: sequenceB, cronExpr: "* * * * *" }));
    expect([foreignSequence.code, foreignSequence.message]).toEqual(["NOT_FOUND", "sequence not found"]);
    expect((await trpcError(a.schedules.list({ tenantId: tenantB }))).code).toBe("NOT_FOUND");
    expect((await b.schedules.list({ tenantId: tenantB })).map((s) => s.enabled)).toEqual([true]);
  });
});
