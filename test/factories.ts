// Small factories for control-plane rows, so tests state only what matters to them.
import { randomBytes, randomUUID } from "node:crypto";
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

/** Stores a sequence of `blocks` for the tenant (definition as clients send it) and returns its id. */
export async function insertSequence(db: TestDatabase, tenantId: string, blocks: unknown[], name = `seq-${randomBytes(3).toString("hex")}`) {
  const id = randomUUID();
  const definition = { id, tenant_id: tenantId, namespace: "default", name, version: 1, created_at: new Date().toISOString(), blocks };
  await db.sql.query(
    "INSERT INTO sequences (id, tenant_id, namespace, name, version, definition, created_at) VALUES ($1, $2, 'default', $3, 1, $4, now())",
    [id, tenantId, name, JSON.stringify(definition)],
  );
  return id;
}

/** `count` instances of a sequence, due now; returns their ids. */
export async function insertInstancesOf(db: TestDatabase, tenantId: string, sequenceId: string, count = 1, context: unknown = { data: null, config: null }) {
  const { rows } = await db.sql.query<{ id: string }>(
    `INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, next_fire_at)
     SELECT gen_random_uuid(), $1, 'default', $2, 'scheduled', $4, now() FROM generate_series(1, $3)
     RETURNING id`,
    [tenantId, sequenceId, count, JSON.stringify(context)],
  );
  return rows.map((r) => r.id);
}
