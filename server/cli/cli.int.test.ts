// The CLI as scripts use it: real commands, real database, exit statuses and output lines.
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { readSessionUser, startSession } from "../auth/sessions.ts";
import { authenticateApiKey } from "../control/api-keys.ts";
import { runCli } from "./commands.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runCli(argv, { ...db, print: (line) => out.push(line) }, (line) => err.push(line));
  return { status, out, err };
}

describe("bulkhead CLI", () => {
  it("creates a tenant placed on the default backend at epoch 1", async () => {
    const result = await cli("tenants", "create", "acme", "--name", "Acme Inc");
    expect(result).toMatchObject({ status: 0, err: [] });
    expect(await db.prisma.tenant.findUnique({ where: { id: "acme" } })).toMatchObject({ name: "Acme Inc" });
    expect(await db.storage.listPlacements()).toContainEqual({ tenantId: "acme", backendId: "primary", epoch: 1, quiescedAt: null });
  });

  it("rejects bad input with one line and status 1, changing nothing", async () => {
    const cases = [
      ["tenants", "create", "Not_A_Slug"],
      ["tenants", "create", "acme"], // duplicate (created above)
      ["tenants", "create"],
      ["users", "create", "not-an-email", "--password", "long enough"],
      ["users", "create", "short@example.test", "--password", "short"],
      // bcrypt reads 72 bytes: a longer password would sign in by its first 72 alone.
      ["users", "create", "long@example.test", "--password", "é".repeat(37)],
      ["members", "add", "no-such-tenant", "x@example.test", "--role", "admin"],
      ["members", "add", "acme", "nobody@example.test", "--role", "owner"],
      ["api-keys", "create", "no-such-tenant"],
      ["tenants", "create", "ok-slug", "--bogus"],
      ["frobnicate", "things"],
    ];
    const before = await Promise.all([db.prisma.tenant.count(), db.prisma.user.count(), db.prisma.apiKey.count()]);
    for (const argv of cases) {
      const result = await cli(...argv);
      expect(result.status, argv.join(" ")).toBe(1);
      expect(result.out).toEqual([]);
      expect(result.err[0], argv.join(" ")).toMatch(/^error: /);
    }
    expect(await Promise.all([db.prisma.tenant.count(), db.prisma.user.count(), db.prisma.apiKey.count()])).toEqual(before);
  });

  it("provisions users, operators and memberships", async () => {
    expect((await cli("users", "create", "Ann@Example.test", "--password", "s3cret-pass")).status).toBe(0);
    expect((await cli("users", "create", "ops@example.test", "--password", "s3cret-pass", "--operator")).status).toBe(0);
    expect((await cli("members", "add", "acme", "ann@example.test", "--role", "admin")).status).toBe(0);
    const ann = await db.prisma.user.findUniqueOrThrow({ where: { email: "ann@example.test" }, include: { memberships: true } });
    expect(ann.isOperator).toBe(false);
    expect(ann.memberships).toMatchObject([{ tenantId: "acme", role: "admin" }]);
    expect((await db.prisma.user.findUniqueOrThrow({ where: { email: "ops@example.test" } })).isOperator).toBe(true);
    expect(await db.prisma.auditLog.count({ where: { actor: "cli", action: "member.add", tenantId: "acme" } })).toBe(1);
  });

  it("signs a user out everywhere, printing how many sessions ended; an unknown email is an error", async () => {
    const ann = await db.prisma.user.findUniqueOrThrow({ where: { email: "ann@example.test" } });
    const ops = await db.prisma.user.findUniqueOrThrow({ where: { email: "ops@example.test" } });
    const sessions = [await startSession(db.prisma, ann.id), await startSession(db.prisma, ann.id)].map((sessionId) => ({ userId: ann.id, sessionId: sessionId! }));
    const opsSession = { userId: ops.id, sessionId: (await startSession(db.prisma, ops.id))! };

    expect(await cli("users", "signout", "Ann@Example.test")).toEqual({ status: 0, out: ["signed ann@example.test out everywhere: 2 sessions ended"], err: [] });
    for (const session of sessions) expect(await readSessionUser(db.prisma, session)).toBeNull();
    expect(await readSessionUser(db.prisma, opsSession)).not.toBeNull();
    expect(await db.prisma.auditLog.findMany({ where: { action: "user.sessions.end" }, select: { actor: true, details: true } })).toEqual([
      { actor: "cli", details: { email: "ann@example.test", ended: 2 } },
    ]);
    expect((await cli("users", "signout", "ann@example.test")).out).toEqual(["signed ann@example.test out everywhere: 0 sessions ended"]);

    expect(await cli("users", "signout", "nobody@example.test")).toEqual({ status: 1, out: [], err: ["error: user not found"] });
    expect((await cli("users", "signout")).status).toBe(1);
    expect(await readSessionUser(db.prisma, opsSession)).not.toBeNull();
  });

  it("prints an API key's secret once, as the last line, and it authenticates", async () => {
    const tenantKey = await cli("api-keys", "create", "acme", "--name", "deploy");
    expect(tenantKey.status).toBe(0);
    const secret = tenantKey.out.at(-1)!;
    await expect(authenticateApiKey(db.prisma, secret)).resolves.toMatchObject({ tenantId: "acme" });

    const operatorKey = await cli("api-keys", "create", "--operator");
    expect(operatorKey.status).toBe(0);
    await expect(authenticateApiKey(db.prisma, operatorKey.out.at(-1)!)).resolves.toMatchObject({ tenantId: null });
  });

  it("works as a process: `npm run bulkhead` exit statuses and standard output", async () => {
    const run = (...argv: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(path.resolve("node_modules/.bin/tsx"), ["scripts/bulkhead.ts", ...argv], {
          env: { ...process.env, DATABASE_URL: db.url },
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk) => (stdout += chunk));
        child.stderr.on("data", (chunk) => (stderr += chunk));
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      });
    const created = await run("api-keys", "create", "acme");
    expect(created.code).toBe(0);
    const lastLine = created.stdout.trimEnd().split("\n").at(-1)!;
    await expect(authenticateApiKey(db.prisma, lastLine)).resolves.toMatchObject({ tenantId: "acme" });

    const refused = await run("tenants", "create", "BAD");
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
  });
});
