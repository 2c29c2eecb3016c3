// runPreflight against a real PostgreSQL: what its reservations leave in the tables.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { StepBlock, type BlockInput } from "../sequence/schema.ts";
import { setBudget } from "../storage/budgets.ts";
import { setRateLimitPolicy } from "../storage/rate-limits.ts";
import { asTenantId, backendOn, RunStore } from "../storage/index.ts";
import { runPreflight } from "./preflight.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

type StepFields = Omit<Extract<BlockInput, { type: "step" }>, "type" | "id" | "handler">;
const step = (fields: StepFields = {}) => StepBlock.parse({ type: "step", id: "s1", handler: "noop", ...fields });
const now = new Date("2026-11-30T10:00:30Z");

async function budgetUsed(tenantId: string): Promise<number> {
  const { rows } = await db.sql.query<{ used: number }>("SELECT used FROM tenant_budgets WHERE tenant_id = $1", [tenantId]);
  return rows[0]!.used;
}

async function slotsTaken(tenantId: string, key: string): Promise<number> {
  const { rows } = await db.sql.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM rate_limit_windows WHERE tenant_id = $1 AND key = $2 AND window_start > '-infinity'",
    [tenantId, key],
  );
  return rows[0]!.n;
}

const run = (tenantId: string, fields: StepFields, at = now) => {
  const reservations = new RunStore(backendOn("primary", db.sql), { id: "i-1", tenantId: asTenantId(tenantId), leaseEpoch: 1, dueAt: now });
  return runPreflight({ step: step(fields), timezone: "UTC", reachedAt: now, startedAt: null, instanceId: "i-1", reservations, now: at });
};

describe("runPreflight reservations", () => {
  it("a proceeding step takes one budget step and one rate-limit unit", async () => {
    await setBudget(db.sql, asTenantId("acme"), 10, 60, now);
    await setRateLimitPolicy(db.sql, asTenantId("acme"), "sms", 2, 60_000);
    expect(await run("acme", { rate_limit_key: "sms" })).toEqual({ kind: "proceed" });
    expect(await budgetUsed("acme")).toBe(1);
    expect(await slotsTaken("acme", "sms")).toBe(1);
  });

  it("a delayed step or a closed send window takes nothing", async () => {
    expect((await run("acme", { delay: { duration: 5000 }, rate_limit_key: "sms" })).kind).toBe("defer");
    expect((await run("acme", { send_window: { start_hour: 22, end_hour: 6 }, rate_limit_key: "sms" })).kind).toBe("defer");
    expect(await budgetUsed("acme")).toBe(1);
    expect(await slotsTaken("acme", "sms")).toBe(1);
  });

  it("a rate-limited step is deferred to the window's next free unit and keeps the budget whole", async () => {
    expect((await run("acme", { rate_limit_key: "sms" })).kind).toBe("proceed");
    expect(await budgetUsed("acme")).toBe(2);
    expect(await run("acme", { rate_limit_key: "sms" })).toEqual({
      kind: "defer", reason: "rate_limit", until: new Date(now.getTime() + 60_000),
    });
    expect(await budgetUsed("acme")).toBe(2);
  });

  it("an exhausted budget defers to the next period, with the reason", async () => {
    await setBudget(db.sql, asTenantId("globex"), 1, 60, now);
    expect((await run("globex", {})).kind).toBe("proceed");
    expect(await run("globex", {})).toEqual({ kind: "defer", reason: "budget", until: new Date("2026-11-30T10:01:00Z") });
    expect((await run("globex", {}, new Date("2026-11-30T10:01:00Z"))).kind).toBe("proceed");
  });
});
