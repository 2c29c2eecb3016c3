// `npm run bulkhead -- limits ...`: operators set rate limits and budgets on the tenant's backend.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant } from "../../test/factories.ts";
import { runCli } from "./commands.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
  await makeTenant(db, "acme");
});
afterAll(() => db.drop());

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runCli(argv, { ...db, print: (line) => out.push(line) }, (line) => err.push(line));
  return { status, out, err };
}

const audit = (action: string) => db.prisma.auditLog.findMany({ where: { actor: "cli", tenantId: "acme", action }, select: { details: true } });

describe("bulkhead limits", () => {
  it("sets, shows and removes a rate limit, each change audited", async () => {
    expect(await cli("limits", "rate", "acme", "sms", "20", "60000")).toEqual({
      status: 0, err: [], out: ['rate limit of acme for key "sms": 20 per 60000 ms'],
    });
    const store = await db.storage.tenant("acme");
    await store.tryConsumeRateLimit("sms", new Date());
    expect((await cli("limits", "show", "acme")).out).toEqual(["budget\tunlimited", "rate\tsms\t20 per 60000 ms\t1 in the current window"]);

    expect((await cli("limits", "rate", "acme", "sms", "0", "0")).out).toEqual(['removed the rate limit of acme for key "sms"']);
    expect((await cli("limits", "rate", "acme", "sms", "0", "0")).out).toEqual(['acme has no rate limit for key "sms"']);
    expect((await cli("limits", "show", "acme")).out).toEqual(["budget\tunlimited", "rate\t(none)"]);
    expect(await audit("rate_limit.set")).toEqual([{ details: { key: "sms", max_count: 20, window_ms: 60000 } }]);
    expect(await audit("rate_limit.remove")).toEqual([{ details: { key: "sms" } }]);
  });

  it("sets, shows and removes a budget, each change audited", async () => {
    expect(await cli("limits", "budget", "acme", "1000", "3600")).toEqual({
      status: 0, err: [], out: ["budget of acme: 1000 steps per 3600 s"],
    });
    const store = await db.storage.tenant("acme");
    await store.tryConsumeBudget(new Date());
    const [budgetLine] = (await cli("limits", "show", "acme")).out;
    expect(budgetLine).toMatch(/^budget\t1000 steps per 3600 s\t1 used since \d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/);

    expect((await cli("limits", "budget", "acme", "0", "0")).out).toEqual(["removed the budget of acme: unlimited"]);
    expect((await cli("limits", "budget", "acme", "0", "0")).out).toEqual(["acme has no budget"]);
    expect(await store.readBudget(new Date())).toBeNull();
    expect(await audit("budget.set")).toEqual([{ details: { steps_per_period: 1000, period_secs: 3600 } }]);
    expect(await audit("budget.remove")).toHaveLength(1);
  });

  it("answers an unknown tenant and bad numbers with one line and status 1, changing nothing", async () => {
    const cases = [
      ["limits", "rate", "no-such-tenant", "sms", "5", "1000"],
      ["limits", "budget", "no-such-tenant", "5", "60"],
      ["limits", "show", "no-such-tenant"],
      ["limits", "rate", "acme", "sms", "five", "1000"],
      ["limits", "rate", "acme", "sms", "5", "0"],
      ["limits", "rate", "acme", "sms", "-5", "1000"],
      ["limits", "rate", "acme", "sms", "100001", "1000"],
      ["limits", "rate", "acme", "sms", "5"],
      ["limits", "budget", "acme", "5", "1.5"],
      ["limits", "budget", "acme", "5", "0"],
      ["limits", "frobnicate", "acme"],
    ];
    const auditBefore = await db.prisma.auditLog.count();
    for (const argv of cases) {
      const result = await cli(...argv);
      expect(result.status, argv.join(" ")).toBe(1);
      expect(result.out, argv.join(" ")).toEqual([]);
      expect(result.err[0], argv.join(" ")).toMatch(/^error: /);
    }
    expect((await cli("limits", "show", "no-such-tenant")).err).toEqual(["error: tenant not found"]);
    expect(await db.prisma.auditLog.count()).toBe(auditBefore);
    expect((await cli("limits", "show", "acme")).out).toEqual(["budget\tunlimited", "rate\t(none)"]);
  });

  it("sets a tenant's retention, back to the default, and refuses days out of range or an unknown tenant", async () => {
    const tenant = (await makeTenant(db)).id;
    expect((await cli("limits", "retention", tenant, "7")).out).toEqual([`${tenant} keeps finished instances 7 days`]);
    expect((await db.sql.query("SELECT retention_days FROM tenant_limits WHERE tenant_id = $1", [tenant])).rows).toEqual([{ retention_days: 7 }]);
    expect((await cli("limits", "retention", tenant, "default")).out).toEqual([`${tenant} keeps finished instances 30 days (the default)`]);
    for (const days of ["0", "36501", "soon"]) expect((await cli("limits", "retention", tenant, days)).status).toBe(1);
    expect(await cli("limits", "retention", "no-such-tenant", "7")).toMatchObject({ status: 1 });
  });
});
