import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeUser, PASSWORD } from "../../test/factories.ts";
import { authenticateCredentials } from "./credentials.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

const signIn = (email: string, password: string, ip: string | null = "203.0.113.1") =>
  authenticateCredentials(db.prisma, { email, password, ip });

describe("sign-in with email and password", () => {
  it("accepts the right password, ignoring the email's case and spaces", async () => {
    const user = await makeUser(db);
    await expect(signIn(` ${user.email.toUpperCase()} `, PASSWORD)).resolves.toMatchObject({ id: user.id, email: user.email });
  });

  it("gives one answer for a wrong password and an unknown email", async () => {
    const user = await makeUser(db);
    const wrong = await signIn(user.email, "not the password").catch((e) => e);
    const unknown = await signIn("nobody@example.test", PASSWORD).catch((e) => e);
    expect(wrong).toMatchObject({ code: "unauthorized" });
    expect({ code: unknown.code, message: unknown.message }).toEqual({ code: wrong.code, message: wrong.message });
  });

  it("answers an email with a NUL or a lone surrogate as a wrong password, and counts it against the address", async () => {
    const user = await makeUser(db);
    for (const email of ["a\u0000b@example.test", "\u0000", `${user.email}\ud800`]) {
      await expect(signIn(email, PASSWORD, "203.0.113.77")).rejects.toMatchObject({ code: "unauthorized", message: "wrong email or password" });
    }
    const { rows } = await db.sql.query("SELECT key, failures FROM sign_in_throttles WHERE key = 'ip:203.0.113.77'");
    expect(rows).toEqual([{ key: "ip:203.0.113.77", failures: 3 }]);
  });

  it("stores passwords as bcrypt hashes", async () => {
    const user = await makeUser(db);
    const { rows } = await db.sql.query("SELECT password_hash FROM users WHERE id = $1", [user.id]);
    expect(rows[0].password_hash).toMatch(/^\$2[aby]\$\d\d\$/);
    expect(rows[0].password_hash).not.toContain(PASSWORD);
  });

  it("locks an account after 5 failures, even for the right password, from any address", async () => {
    const user = await makeUser(db);
    for (let i = 0; i < 5; i++) await expect(signIn(user.email, "wrong", `198.51.100.${i}`)).rejects.toMatchObject({ code: "unauthorized" });
    await expect(signIn(user.email, PASSWORD, "198.51.100.200")).rejects.toMatchObject({ code: "rate_limited" });
  });

  it("a success clears the account's failures", async () => {
    const user = await makeUser(db);
    for (let i = 0; i < 4; i++) await signIn(user.email, "wrong", null).catch(() => {});
    await signIn(user.email, PASSWORD, null);
    for (let i = 0; i < 4; i++) await signIn(user.email, "wrong", null).catch(() => {});
    await expect(signIn(user.email, PASSWORD, null)).resolves.toMatchObject({ id: user.id });
  });

  it("limits one address to 20 failures across accounts", async () => {
    const ip = "192.0.2.77";
    for (let i = 0; i < 20; i++) await signIn(`guess${i}@example.test`, "wrong", ip).catch(() => {});
    const user = await makeUser(db);
    await expect(signIn(user.email, PASSWORD, ip)).rejects.toMatchObject({ code: "rate_limited" });
    await expect(signIn(user.email, PASSWORD, "192.0.2.78")).resolves.toMatchObject({ id: user.id });
  });
});
