import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant } from "../../test/factories.ts";
import { authenticateApiKey, createApiKey, hashSecret } from "./api-keys.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

describe("API keys", () => {
  it("are stored only as a hash of the secret", async () => {
    const tenant = await makeTenant(db);
    const key = await createApiKey(db.prisma, { tenantId: tenant.id, name: "ci" });
    const { rows } = await db.sql.query("SELECT * FROM api_keys WHERE id = $1", [key.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].secret_hash).toBe(hashSecret(key.secret));
    expect(rows[0].prefix).toBe(key.secret.slice(0, rows[0].prefix.length));
    expect(JSON.stringify(rows[0])).not.toContain(key.secret);
  });

  it("authenticate by their secret, for their own tenant", async () => {
    const tenant = await makeTenant(db);
    const key = await createApiKey(db.prisma, { tenantId: tenant.id });
    await expect(authenticateApiKey(db.prisma, key.secret)).resolves.toEqual({ keyId: key.id, tenantId: tenant.id });
    await expect(authenticateApiKey(db.prisma, key.secret.slice(0, -1) + (key.secret.endsWith("A") ? "B" : "A"))).resolves.toBeNull();
    await expect(authenticateApiKey(db.prisma, "")).resolves.toBeNull();
    await expect(authenticateApiKey(db.prisma, hashSecret(key.secret))).resolves.toBeNull();
  });

  it("operator keys belong to no tenant", async () => {
    const key = await createApiKey(db.prisma, { tenantId: null });
    await expect(authenticateApiKey(db.prisma, key.secret)).resolves.toEqual({ keyId: key.id, tenantId: null });
  });

  it("stop authenticating once revoked", async () => {
    const tenant = await makeTenant(db);
    const key = await createApiKey(db.prisma, { tenantId: tenant.id });
    await db.prisma.apiKey.update({ where: { id: key.id }, data: { revokedAt: new Date() } });
    await expect(authenticateApiKey(db.prisma, key.secret)).resolves.toBeNull();
  });

  it("cannot be created for a tenant that does not exist", async () => {
    await expect(createApiKey(db.prisma, { tenantId: "no-such-tenant" })).rejects.toMatchObject({ code: "not_found" });
  });
});
