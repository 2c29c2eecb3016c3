// The operator console's Resources page, end to end. A tenant runs a fan-out (4 instances of a
// parallel of 40 http_request branches) against a vendor that answers slowly, so every branch
// holds a step slot while it waits. With the tenant's step limit set to 4 on its page first, the
// Resources page shows it at its limit, 4 / 4, and the vendor never sees more than 4 of its calls
// at once; the operator raises the limit to 12 in the tenant's row on the Resources page, and
// within seconds the engine runs more of its steps at once, which the page shows as a peak above
// 4. The change keeps the tenant's claim cap and in-flight limit and is in the audit log. The
// ledger is there, with the boundaries not enforced yet marked; the page fits a 390 px phone.
// Another tenant gets an API rate of 1/s and an outbound limit of 1 on its page: a quick run of
// calls with its API key gets 429s with Retry-After, and a fan-out of three calls to the slow
// vendor has two of them wait for the one outbound slot; the Resources page lists the key as a
// throttled caller, held to 1/s, and the tenant as waiting at its own outbound limit.
// Tenant users get the ordinary not-found page.
import { expect, test, type Page } from "@playwright/test";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { LEDGER } from "../engine/resources/ledger.ts";
import { E2E_SLOW_VENDOR_PORT } from "./env.ts";
import { bulkheadCli, createOperatorKey, DEMO_OPERATOR, mainText, signIn, withDb } from "./fixtures.ts";

const VENDOR = `http://127.0.0.1:${E2E_SLOW_VENDOR_PORT}`;
/** How long the vendor takes to answer: each branch holds its slot this long. */
const VENDOR_MS = 1_500;
const INSTANCES = 4;
const BRANCHES = 40;
// Both under the 16 requests a tenant may have open to one host, so only the step limit binds.
const LOW_LIMIT = 4;
const RAISED_LIMIT = 12;
/** The tenant page's form of the claim cap and the other limits saved with it. */
const LIMITS_FORM = "Claim cap, in-flight limit, step limit, outbound requests per host, API requests per second, cron schedules and webhooks per second";

// ------------------------------------------------------------------------------- the vendor

/** Calls open at the vendor now, and the most at once; and the same per tenant (its `tenant` query parameter). */
let open = 0;
let peak = 0;
let calls = 0;
const openOf = new Map<string, number>();
const peakOf = new Map<string, number>();
let vendor: http.Server;
let operatorKey: string;

test.beforeAll(async () => {
  vendor = http.createServer((request, response) => {
    request.resume();
    const tenant = new URL(request.url ?? "/", "http://vendor").searchParams.get("tenant") ?? "";
    const opened = (by: number) => {
      open += by;
      openOf.set(tenant, (openOf.get(tenant) ?? 0) + by);
    };
    opened(1);
    calls++;
    peak = Math.max(peak, open);
    peakOf.set(tenant, Math.max(peakOf.get(tenant) ?? 0, openOf.get(tenant)!));
    const timer = setTimeout(() => {
      opened(-1);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ok: true }));
    }, VENDOR_MS);
    response.on("close", () => {
      if (!response.writableFinished) {
        clearTimeout(timer);
        opened(-1);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    vendor.once("error", reject);
    vendor.listen(E2E_SLOW_VENDOR_PORT, "127.0.0.1", resolve);
  });
  operatorKey = await createOperatorKey("resources-e2e");
});

test.afterAll(async () => {
  vendor.closeAllConnections();
  await new Promise<void>((resolve) => vendor.close(() => resolve()));
});

// ------------------------------------------------------------------------------- helpers

const headers = () => ({ "x-api-key": operatorKey });

const stepSlots = (page: Page) => page.getByRole("table", { name: "Step slots by tenant", exact: true });
const rowOf = (page: Page, tenant: string) => stepSlots(page).getByRole("row").filter({ has: page.getByRole("link", { name: tenant, exact: true }) });

/** Waits out the end of a clock minute, so counts "of this minute" are still of it when the page reads them. */
async function wellInsideAMinute(page: Page, secondsLeft = 25): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < secondsLeft * 1_000) await page.waitForTimeout(left + 200);
}

/** No horizontal scrolling: neither of the page nor inside any of its tables' wrappers. */
async function overflows(page: Page): Promise<{ page: number; tables: number[] }> {
  return page.evaluate(() => ({
    page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    tables: [...document.querySelectorAll(".table-wrap")].map((wrap) => wrap.scrollWidth - wrap.clientWidth),
  }));
}

/** The tenant's "peak / limit" cell as numbers. */
async function peakAndLimit(page: Page, tenant: string): Promise<{ peak: number; limit: number; text: string }> {
  const text = (await rowOf(page, tenant).getByRole("cell").nth(1).innerText()).replace(/\s+/g, " ").trim();
  const match = /^(\d+) \/ (\d+)/.exec(text);
  return { peak: Number(match?.[1] ?? NaN), limit: Number(match?.[2] ?? NaN), text };
}

// ------------------------------------------------------------------------------- the specs

test("an operator sees a fan-out at its step limit on the Resources page, raises the limit there, and the engine follows", async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const tenant = `res-${Date.now().toString(36)}`;

  await test.step("a tenant with a fan-out sequence against the slow vendor", async () => {
    expect((await request.post("/api/v1/tenants", { headers: headers(), data: { id: tenant } })).status()).toBe(201);
  });
  const sequenceId = randomUUID();
  const branches = Array.from({ length: BRANCHES }, (_, i) => [{
    type: "step", id: `call-${i}`, handler: "http_request",
    params: { method: "GET", url: `${VENDOR}/slow?tenant=${tenant}&branch=${i}`, timeout_ms: 20_000 },
  }]);
  const created = await request.post("/api/v1/sequences", {
    headers: headers(),
    data: {
      id: sequenceId, tenant_id: tenant, namespace: "default", name: "fan-out", version: 1, created_at: new Date().toISOString(),
      blocks: [{ type: "parallel", id: "fan", branches }],
    },
  });
  expect(created.status()).toBe(201);

  await test.step(`its step limit set to ${LOW_LIMIT} on its page (with its own claim cap and in-flight limit)`, async () => {
    await signIn(page, DEMO_OPERATOR);
    await page.goto(`/ops/tenants/${tenant}`);
    const caps = page.getByRole("form", { name: LIMITS_FORM, exact: true });
    await caps.getByRole("spinbutton", { name: "Claim cap", exact: true }).fill("6");
    await caps.getByRole("spinbutton", { name: "In-flight limit", exact: true }).fill("10");
    await caps.getByRole("spinbutton", { name: "Step limit", exact: true }).fill(String(LOW_LIMIT));
    await caps.getByRole("button", { name: "Save limits", exact: true }).click();
    await expect(page.getByRole("status").filter({ hasText: "Saved:" })).toContainText(`Saved: claim cap 6, in-flight limit 10, step limit ${LOW_LIMIT}, outbound requests per host the default (16), API rate the default (50/s), cron schedules the default (1,000), webhook rate the default (100/s).`);
    // Engines read tenant limits every 500 ms.
    await page.waitForTimeout(1_500);
  });

  await test.step(`the Resources page shows it at its limit, ${LOW_LIMIT} / ${LOW_LIMIT}`, async () => {
    const instances = Array.from({ length: INSTANCES }, () => ({ sequence_id: sequenceId, tenant_id: tenant, namespace: "default" }));
    const started = await request.post("/api/v1/instances/batch", { headers: headers(), data: { instances } });
    expect(started.status()).toBe(201);

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Resources", exact: true }).click();
    await expect(page).toHaveURL(/\/ops\/resources$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Resources");
    // Engines flush metrics every 5 s; the page reads them every 2 s.
    const row = rowOf(page, tenant);
    await expect(row.getByRole("cell").nth(1)).toHaveText(`${LOW_LIMIT} / ${LOW_LIMIT} at limit`, { timeout: 20_000 });
    await expect(row.getByRole("cell").nth(2)).not.toHaveText("0");
    // The tenant's own limit is in its input, the default in the placeholder.
    const input = row.getByRole("spinbutton", { name: `Step limit of ${tenant}`, exact: true });
    await expect(input).toHaveValue(String(LOW_LIMIT));
    await expect(input).toHaveAttribute("placeholder", /^default: \d+$/);
    // The engine held the tenant to its limit: the vendor saw no more of its calls at once.
    expect(peak).toBe(LOW_LIMIT);
    expect(calls).toBeLessThan(INSTANCES * BRANCHES);
  });

  await test.step(`the operator raises it to ${RAISED_LIMIT} in the tenant's row, and the page shows a peak above ${LOW_LIMIT} within 15 s`, async () => {
    const row = rowOf(page, tenant);
    await row.getByRole("spinbutton", { name: `Step limit of ${tenant}`, exact: true }).fill(String(RAISED_LIMIT));
    await row.getByRole("button", { name: `Save the step limit of ${tenant}`, exact: true }).click();
    await expect(page.getByRole("status")).toHaveText(`Saved: the step limit of ${tenant} is ${RAISED_LIMIT}. Engines follow within a second.`);
    const raisedAt = Date.now();
    await expect.poll(async () => (await peakAndLimit(page, tenant)).limit, { timeout: 5_000 }).toBe(RAISED_LIMIT);
    await expect.poll(async () => (await peakAndLimit(page, tenant)).peak, { timeout: 15_000, intervals: [250] }).toBeGreaterThan(LOW_LIMIT);
    testInfo.annotations.push({ type: "peak above the old limit after", description: `${((Date.now() - raisedAt) / 1_000).toFixed(1)} s` });
    const shown = await peakAndLimit(page, tenant);
    expect(shown.peak).toBeLessThanOrEqual(RAISED_LIMIT);
    expect(peak).toBeGreaterThan(LOW_LIMIT);
    expect(peak).toBeLessThanOrEqual(RAISED_LIMIT);

    // Audited like the tenant page's change, the claim cap and in-flight limit kept as they were.
    const audit = await withDb((db) => db.query("SELECT actor, details FROM audit_log WHERE tenant_id = $1 AND action = 'limits.set' ORDER BY id", [tenant]));
    expect(audit.rows).toEqual([
      { actor: DEMO_OPERATOR, details: { claim_cap: 6, max_concurrency: 10, max_steps: LOW_LIMIT, outbound_per_host: null, api_rate_per_sec: null, cron_schedules: null, webhook_rate_per_sec: null, lag_objective_ms: null, retention_days: null } },
      { actor: DEMO_OPERATOR, details: { claim_cap: 6, max_concurrency: 10, max_steps: RAISED_LIMIT, outbound_per_host: null, api_rate_per_sec: null, cron_schedules: null, webhook_rate_per_sec: null, lag_objective_ms: null, retention_days: null } },
    ]);
  });

  await test.step("the ledger lists every resource, the ones not enforced yet marked", async () => {
    const ledger = page.getByRole("table", { name: "Resource ledger", exact: true });
    await expect(ledger.getByRole("row")).toHaveCount(LEDGER.length + 1);
    const steps = LEDGER.find((e) => e.id === "step_slots")!;
    const stepsRow = ledger.getByRole("row").filter({ has: page.getByRole("rowheader", { name: steps.resource, exact: true }) });
    await expect(stepsRow.getByRole("cell")).toHaveText([steps.boundary, steps.default, steps.setting!, steps.override!, steps.enforcedAt]);
    const missing = LEDGER.filter((e) => !e.enforced);
    await expect(ledger.getByRole("row").filter({ hasText: "not yet enforced" })).toHaveCount(missing.length);
    for (const entry of missing) {
      await expect(ledger.getByRole("row").filter({ has: page.getByRole("rowheader", { name: entry.resource, exact: true }) }))
        .toContainText(`not yet enforced ${entry.enforcedAt}`);
    }
  });

  await test.step("screenshots, wide and at 390 px, where nothing overflows the page", async () => {
    await page.screenshot({ path: testInfo.outputPath("resources.png"), fullPage: true });
    await testInfo.attach("resources", { path: testInfo.outputPath("resources.png"), contentType: "image/png" });
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(stepSlots(page)).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: testInfo.outputPath("resources-390.png"), fullPage: true });
    await testInfo.attach("resources at 390 px", { path: testInfo.outputPath("resources-390.png"), contentType: "image/png" });
    // What a phone shows first, with the step slots table scrolled to the tenant's limit form.
    await rowOf(page, tenant).getByRole("spinbutton", { name: `Step limit of ${tenant}`, exact: true }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: testInfo.outputPath("resources-390-form.png") });
    await testInfo.attach("resources at 390 px, the limit form", { path: testInfo.outputPath("resources-390-form.png"), contentType: "image/png" });
  });
});

test("an operator sets a tenant's API rate to 1/s and its outbound limit to 1 on its page; the Resources page shows its key throttled and its calls waiting", async ({ page, request }, testInfo) => {
  test.setTimeout(120_000);
  const tenant = `thr-${Date.now().toString(36)}`;
  const ledgerRow = (id: string) => LEDGER.find((e) => e.id === id)!;
  let key = "";
  let prefix = "";
  const sequenceId = randomUUID();

  await test.step("a tenant with an API key, and a fan-out of three calls to the slow vendor", async () => {
    expect((await request.post("/api/v1/tenants", { headers: headers(), data: { id: tenant } })).status()).toBe(201);
    key = (await bulkheadCli("api-keys", "create", tenant, "--name", "throttled-e2e")).trim().split("\n").at(-1)!;
    prefix = (await withDb((db) => db.query<{ prefix: string }>("SELECT prefix FROM api_keys WHERE tenant_id = $1", [tenant]))).rows[0]!.prefix;
    expect(key.startsWith(prefix)).toBe(true);
    const branches = [0, 1, 2].map((i) => [{
      type: "step", id: `call-${i}`, handler: "http_request",
      params: { method: "GET", url: `${VENDOR}/slow?tenant=${tenant}&branch=${i}`, timeout_ms: 20_000 },
    }]);
    const created = await request.post("/api/v1/sequences", {
      headers: headers(),
      data: {
        id: sequenceId, tenant_id: tenant, namespace: "default", name: "three-calls", version: 1, created_at: new Date().toISOString(),
        blocks: [{ type: "parallel", id: "fan", branches }],
      },
    });
    expect(created.status()).toBe(201);
  });

  await test.step("its API rate set to 1/s and its outbound limit to 1 on its page", async () => {
    await signIn(page, DEMO_OPERATOR);
    await page.goto(`/ops/tenants/${tenant}`);
    const caps = page.getByRole("form", { name: LIMITS_FORM, exact: true });
    const outbound = caps.getByRole("spinbutton", { name: "Outbound requests per host", exact: true });
    const apiRate = caps.getByRole("spinbutton", { name: "API requests per second", exact: true });
    // Empty: the defaults, said in the placeholders.
    await expect(outbound).toHaveValue("");
    await expect(outbound).toHaveAttribute("placeholder", "default: 16");
    await expect(apiRate).toHaveAttribute("placeholder", "default: 50");
    await outbound.fill("1");
    await apiRate.fill("1");
    await caps.getByRole("button", { name: "Save limits", exact: true }).click();
    await expect(page.getByRole("status").filter({ hasText: "Saved:" })).toHaveText(
      "Saved: claim cap the default (8), in-flight limit the default (32), step limit the default (32), outbound requests per host 1, API rate 1/s, cron schedules the default (1,000), webhook rate the default (100/s).",
    );
    const audit = await withDb((db) => db.query("SELECT actor, details FROM audit_log WHERE tenant_id = $1 AND action = 'limits.set' ORDER BY id", [tenant]));
    expect(audit.rows).toEqual([
      { actor: DEMO_OPERATOR, details: { claim_cap: null, max_concurrency: null, max_steps: null, outbound_per_host: 1, api_rate_per_sec: 1, cron_schedules: null, webhook_rate_per_sec: null, lag_objective_ms: null, retention_days: null } },
    ]);
    await page.reload();
    await expect(page.getByRole("spinbutton", { name: "Outbound requests per host", exact: true })).toHaveValue("1");
    await expect(page.getByRole("spinbutton", { name: "API requests per second", exact: true })).toHaveValue("1");
    // Engines read tenant limits every 500 ms, web processes within a second.
    await page.waitForTimeout(1_500);
  });

  let refused = 0;
  await test.step("the fan-out runs, and ten quick calls with the tenant's key get 429s with Retry-After", async () => {
    const started = await request.post("/api/v1/instances", { headers: headers(), data: { sequence_id: sequenceId, tenant_id: tenant, namespace: "default" } });
    expect(started.status()).toBe(201);

    await wellInsideAMinute(page);
    const replies: { status: number; retryAfter: string | undefined }[] = [];
    for (let i = 0; i < 10; i++) {
      const reply = await request.get("/api/v1/circuit-breakers", { headers: { "x-api-key": key } });
      replies.push({ status: reply.status(), retryAfter: reply.headers()["retry-after"] });
    }
    // 1/s with a burst in proportion to the default's (50/s, 200): 4 at once.
    expect(replies.slice(0, 4).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const refusals = replies.filter((r) => r.status === 429);
    refused = refusals.length;
    expect(refused).toBeGreaterThanOrEqual(5);
    expect(replies.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    for (const r of refusals) expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    testInfo.annotations.push({ type: "refused", description: `${refused} of 10` });
  });

  await test.step("the Resources page lists the key as throttled, held to 1/s, and the tenant waiting at its own outbound limit", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Resources", exact: true }).click();
    await expect(page).toHaveURL(/\/ops\/resources$/);
    const throttled = page.getByRole("table", { name: "Throttled API callers", exact: true });
    const callerRow = throttled.getByRole("row").filter({ has: page.getByRole("link", { name: tenant, exact: true }) });
    await expect(callerRow).toHaveCount(1, { timeout: 15_000 });
    await expect(callerRow.getByRole("cell")).toHaveText([`${prefix}…`, "api key", "1", /^\d{1,2}:\d{2}:\d{2}/, "1/s, burst 4", String(refused)]);

    // Engines flush metrics every 5 s; two of the three calls waited for the tenant's one slot to the vendor.
    const waits = page.getByRole("table", { name: "Waits for other bounded resources", exact: true });
    const outbound = ledgerRow("outbound_per_host");
    const waitRow = waits.getByRole("row")
      .filter({ has: page.getByRole("rowheader", { name: outbound.resource, exact: true }) })
      .filter({ has: page.getByRole("link", { name: tenant, exact: true }) });
    await expect(waitRow).toHaveCount(1, { timeout: 25_000 });
    await expect(waitRow.getByRole("cell")).toHaveText([tenant, /^[1-9]\d*$/, "1 open at once (its own) at its limit"]);
    expect(peakOf.get(tenant)).toBe(1);
  });

  await test.step("a screenshot at 1440 px, where nothing overflows the page or a table", async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await expect(page.getByRole("table", { name: "Throttled API callers", exact: true })).toBeVisible();
    const overflow = await overflows(page);
    expect(overflow.page).toBeLessThanOrEqual(0);
    expect(overflow.tables.filter((px) => px > 0)).toEqual([]);
    await page.screenshot({ path: testInfo.outputPath("resources-1440.png"), fullPage: true });
    await testInfo.attach("resources at 1440 px", { path: testInfo.outputPath("resources-1440.png"), contentType: "image/png" });
  });
});

for (const user of ["admin@acme.test", "member@acme.test"]) {
  test(`${user} gets the ordinary not-found page for /ops/resources, and no Resources link`, async ({ page }) => {
    await signIn(page, user);
    const missing = await page.goto("/no-such-page");
    expect(missing?.status()).toBe(404);
    const notFound = await mainText(page);
    const response = await page.goto("/ops/resources");
    expect(response?.status()).toBe(404);
    expect(await mainText(page)).toBe(notFound);
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Resources" })).toHaveCount(0);
  });
}
