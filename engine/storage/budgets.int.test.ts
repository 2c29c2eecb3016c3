// Tenant budgets against a real PostgreSQL: exhaustion, the next period, concurrency, no budget.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { readBudget, refundBudget, removeBudget, setBudget, tryConsumeBudget } from "./budgets.ts";
import { asTenantId } from "./index.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

// 10:00:00 UTC: on the grid of one-minute and one-hour periods.
const T0 = Date.parse("2026-11-30T10:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms);

async function row(tenantId: string) {
  const { rows } = await db.sql.query<{ period_start: Date; used: number }>(
    "SELECT period_start, used FROM tenant_budgets WHERE tenant_id = $1",
    [tenantId],
  );
  return rows[0];
}

describe("tryConsumeBudget", () => {
  it("allows steps_per_period, then defers to the start of the next period", async () => {
    await setBudget(db.sql, asTenantId("acme"), 3, 60, at(12_345));
    for (const t of [13_000, 20_000, 59_000]) {
      expect(await tryConsumeBudget(db.sql, asTenantId("acme"), at(t))).toEqual({ ok: true, periodStart: at(0) });
    }
    expect(await tryConsumeBudget(db.sql, asTenantId("acme"), at(59_999))).toEqual({ ok: false, retryAt: at(60_000) });
    // A refusal writes nothing.
    expect(await row("acme")).toEqual({ period_start: at(0), used: 3 });
  });

  it("resets at the next period, on the grid even after idle periods", async () => {
    expect(await tryConsumeBudget(db.sql, asTenantId("acme"), at(60_000))).toEqual({ ok: true, periodStart: at(60_000) });
    expect(await row("acme")).toEqual({ period_start: at(60_000), used: 1 });
    // Three periods later, a few seconds in: the period is the one that holds now.
    expect(await tryConsumeBudget(db.sql, asTenantId("acme"), at(245_000))).toEqual({ ok: true, periodStart: at(240_000) });
    expect(await tryConsumeBudget(db.sql, asTenantId("acme"), at(250_000))).toMatchObject({ ok: true });
    expect(await tryConsumeBudget(db.sql, asTenantId("acme"), at(299_000))).toMatchObject({ ok: true });
    expect(await tryConsumeBudget(db.sql, asTenantId("acme"), at(299_500))).toEqual({ ok: false, retryAt: at(300_000) });
  });

  it("keeps tenants apart", async () => {
    await setBudget(db.sql, asTenantId("globex"), 1, 3600, at(0));
    expect((await tryConsumeBudget(db.sql, asTenantId("globex"), at(1))).ok).toBe(true);
    expect((await tryConsumeBudget(db.sql, asTenantId("globex"), at(2))).ok).toBe(false);
    expect((await tryConsumeBudget(db.sql, asTenantId("initech"), at(2))).ok).toBe(true);
  });

  it("without a budget is unlimited and writes nothing", async () => {
    for (let i = 0; i < 50; i++) expect(await tryConsumeBudget(db.sql, asTenantId("nobudget"), at(i))).toEqual({ ok: true, periodStart: null });
    expect(await row("nobudget")).toBeUndefined();
  });

  it("concurrent consumers on separate connections take exactly steps_per_period", async () => {
    await setBudget(db.sql, asTenantId("hooli"), 20, 3600, at(0));
    const clients = Array.from({ length: 8 }, () => new pg.Client({ connectionString: db.url }));
    await Promise.all(clients.map((client) => client.connect()));
    try {
      const wins = await Promise.all(
        clients.map(async (client) => {
          let won = 0;
          for (let i = 0; i < 50; i++) if ((await tryConsumeBudget(client, asTenantId("hooli"), at(1000 + i))).ok) won++;
          return won;
        }),
      );
      expect(wins.reduce((a, b) => a + b, 0)).toBe(20);
      expect(await row("hooli")).toEqual({ period_start: at(0), used: 20 });
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
  });
});

describe("budget settings", () => {
  it("refunds a step within its period only", async () => {
    await setBudget(db.sql, asTenantId("wayne"), 2, 60, at(0));
    const first = await tryConsumeBudget(db.sql, asTenantId("wayne"), at(1000));
    await tryConsumeBudget(db.sql, asTenantId("wayne"), at(2000));
    expect((await tryConsumeBudget(db.sql, asTenantId("wayne"), at(3000))).ok).toBe(false);
    await refundBudget(db.sql, asTenantId("wayne"), (first as { periodStart: Date }).periodStart);
    expect((await tryConsumeBudget(db.sql, asTenantId("wayne"), at(4000))).ok).toBe(true);

    // A refund for a period that has ended changes nothing.
    await tryConsumeBudget(db.sql, asTenantId("wayne"), at(61_000));
    await refundBudget(db.sql, asTenantId("wayne"), at(0));
    expect(await row("wayne")).toEqual({ period_start: at(60_000), used: 1 });
  });

  it("a new size keeps the period and its use, a new period length starts afresh", async () => {
    await setBudget(db.sql, asTenantId("stark"), 5, 3600, at(0));
    for (let i = 0; i < 3; i++) await tryConsumeBudget(db.sql, asTenantId("stark"), at(1000));
    await setBudget(db.sql, asTenantId("stark"), 2, 3600, at(2000));
    expect(await readBudget(db.sql, asTenantId("stark"), at(2000))).toEqual({ stepsPerPeriod: 2, periodSecs: 3600, periodStart: at(0), used: 3 });
    expect(await tryConsumeBudget(db.sql, asTenantId("stark"), at(2000))).toEqual({ ok: false, retryAt: at(3_600_000) });

    await setBudget(db.sql, asTenantId("stark"), 2, 60, at(90_000));
    expect(await readBudget(db.sql, asTenantId("stark"), at(90_000))).toEqual({ stepsPerPeriod: 2, periodSecs: 60, periodStart: at(60_000), used: 0 });
    // Read after the period ended: a fresh period, nothing used.
    expect(await readBudget(db.sql, asTenantId("stark"), at(200_000))).toMatchObject({ periodStart: at(180_000), used: 0 });
  });

  it("removes a budget, and refuses sizes it cannot hold", async () => {
    expect(await removeBudget(db.sql, asTenantId("stark"))).toBe(true);
    expect(await removeBudget(db.sql, asTenantId("stark"))).toBe(false);
    expect(await readBudget(db.sql, asTenantId("stark"), at(0))).toBeNull();
    await expect(setBudget(db.sql, asTenantId("stark"), 0, 60, at(0))).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(setBudget(db.sql, asTenantId("stark"), 5, 0, at(0))).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(setBudget(db.sql, asTenantId("stark"), 5, 366 * 86_400 + 1, at(0))).rejects.toMatchObject({ code: "invalid_argument" });
  });
});
