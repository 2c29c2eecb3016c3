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
