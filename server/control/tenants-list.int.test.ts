// listTenants in one statement: the same tenants, order, placements, member counts and quiesced
// flags as reading them through Prisma's relations (what it replaced), for tenants with and
// without members and a quiesced one.
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant, makeUser } from "../../test/factories.ts";
import { listTenants } from "./tenants.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

it("lists every tenant as Prisma's relations read them", async () => {
  const [a, b, c] = [(await makeTenant(db, "zeta-co")).id, (await makeTenant(db, "alpha-co")).id, (await makeTenant(db, "mid-co")).id];
  await makeUser(db, { memberOf: [[a, "admin"], [b, "member"]] });
  await makeUser(db, { memberOf: [[a, "member"]] });
  await db.prisma.tenantStoragePlacement.update({ where: { tenantId: c }, data: { quiescedAt: new Date(), epoch: 4 } });

  const viaRelations = (await db.prisma.tenant.findMany({
    orderBy: { id: "asc" },
    select: { id: true, name: true, createdAt: true, placement: true, _count: { select: { memberships: true } } },
  })).map((t) => ({
    id: t.id, name: t.name, createdAt: t.createdAt, memberCount: t._count.memberships,
    backendId: t.placement?.backendId ?? null, epoch: t.placement ? Number(t.placement.epoch) : null, quiesced: t.placement?.quiescedAt != null,
  }));
  const listed = await listTenants(db.prisma);
  expect(listed).toEqual(viaRelations);
  expect(listed.map((t) => t.id)).toEqual(["alpha-co", "mid-co", "zeta-co"]);
  expect(listed.find((t) => t.id === a)).toMatchObject({ memberCount: 2, quiesced: false, epoch: 1 });
  expect(listed.find((t) => t.id === c)).toMatchObject({ memberCount: 0, quiesced: true, epoch: 4 });
});
