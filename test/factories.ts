// Small factories for control-plane rows, so tests state only what matters to them.
import { randomBytes } from "node:crypto";
import { createTenant } from "../server/control/tenants.ts";
import { addMember, createUser, type Role } from "../server/control/users.ts";
import type { TestDatabase } from "./db.ts";

export const PASSWORD = "correct horse battery";

export async function makeTenant(db: TestDatabase, slug = `t-${randomBytes(4).toString("hex")}`) {
  return createTenant(db.prisma, { slug, backendId: db.config.BULKHEAD_DEFAULT_BACKEND });
}

export async function makeUser(
  db: TestDatabase,
  options: { memberOf?: [tenantId: string, role: Role][]; isOperator?: boolean } = {},
) {
  const user = await createUser(db.prisma, {
    email: `u-${randomBytes(4).toString("hex")}@example.test`,
    password: PASSWORD,
    isOperator: options.isOperator,
  });
  for (const [tenantId, role] of options.memberOf ?? []) await addMember(db.prisma, { tenantId, email: user.email, role });
  return user;
}

/** `count` scheduled instances of one tenant, due at `dueAt` (spread by 1 ms each, in order). */
export async function insertDueInstances(db: TestDatabase, tenantId: string, count: number, dueAt = new Date(Date.now() - 60_000)) {
  await db.sql.query(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, next_fire_at)
     SELECT gen_random_uuid(), $1, 'default', gen_random_uuid(), 'scheduled', $2::timestamptz + i * interval '1 millisecond'
       FROM generate_series(1, $3) AS i`,
    [tenantId, dueAt, count],
  );
}
