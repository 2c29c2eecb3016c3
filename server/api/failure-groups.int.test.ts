// The Failed view's data (tRPC instances.failureGroups) and "retry this group" (batchAction with
// filter.errorFingerprint), against a real PostgreSQL: the tenant's failed instances grouped by
// fingerprint, the largest group first, another tenant's never counted; retrying a group touches
// that group's instances only.
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertSequence, makeTenant, makeUser } from "../../test/factories.ts";
import { fingerprintOf } from "../../engine/exec/failure-cause.ts";
import { createCaller } from "./root.ts";
import { createContext } from "./trpc.ts";

let db: TestDatabase;
let tenant: string;
let other: string;
let admin: { id: string };
let member: { id: string };
beforeAll(async () => {
  db = await freshDatabase();
  tenant = (await makeTenant(db)).id;
  other = (await makeTenant(db)).id;
  admin = await makeUser(db, { memberOf: [[tenant, "admin"]] });
  member = await makeUser(db, { memberOf: [[tenant, "member"]] });
});
afterAll(() => db.drop());

const as = (user: { id: string }) => createCaller(createContext(db, user.id));

/** A failed instance of `tenantId` as the engine leaves one: its cause and fingerprint recorded. */
async function failed(tenantId: string, message: string, ageMs = 0) {
  const sequenceId = await insertSequence(db, tenantId, [{ type: "step", id: "charge", handler: "http_request" }]);
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, failed_block, error_message, error_fingerprint, updated_at, completed_at)
     VALUES (gen_random_uuid(), $1, 'default', $2, 'failed', 'charge', $3, $4, now() - $5 * interval '1 millisecond', now()) RETURNING id`,
    [tenantId, sequenceId, message, fingerprintOf("http_request", message), ageMs],
  );
  return rows[0]!.id;
}

it("groups the tenant's failures by fingerprint, largest first, with the newest message of each", async () => {
  const down = [await failed(tenant, "HTTP 503 for order 1", 30), await failed(tenant, "HTTP 503 for order 2", 20), await failed(tenant, "HTTP 503 for order 3", 10)];
  const auth = await failed(tenant, "HTTP 401 bad key");
  for (let i = 0; i < 5; i++) await failed(other, "HTTP 503 for order 9");
  const groups = await as(member).instances.failureGroups({ tenantId: tenant });
  expect(groups).toEqual([
    { fingerprint: "http_request: HTTP # for order #", count: 3, latestAt: expect.any(String), sampleInstanceId: down[2], sampleMessage: "HTTP 503 for order 3", sampleBlock: "charge" },
    { fingerprint: "http_request: HTTP # bad key", count: 1, latestAt: expect.any(String), sampleInstanceId: auth, sampleMessage: "HTTP 401 bad key", sampleBlock: "charge" },
  ]);

  // Retrying the first group retries its three and leaves the other group, and the other tenant, alone.
  const result = await as(admin).instances.batchAction({
    tenantId: tenant, action: "retry", filter: { states: ["failed"], errorFingerprint: groups[0]!.fingerprint! },
  });
  expect(result).toMatchObject({ matched: 3, applied: 3, dryRun: false });
  const { rows } = await db.sql.query("SELECT id, state FROM task_instances WHERE tenant_id = $1 ORDER BY id", [tenant]);
  const stateOf = Object.fromEntries(rows.map((r) => [r.id, r.state]));
  for (const id of down) expect(stateOf[id]).toBe("scheduled");
  expect(stateOf[auth]).toBe("failed");
  const theirs = await db.sql.query("SELECT count(*)::int AS n FROM task_instances WHERE tenant_id = $1 AND state = 'failed'", [other]);
  expect(theirs.rows[0].n).toBe(5);
  expect(await as(member).instances.failureGroups({ tenantId: tenant })).toEqual([expect.objectContaining({ count: 1, sampleInstanceId: auth })]);
});
