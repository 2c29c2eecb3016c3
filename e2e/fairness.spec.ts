// The operator's fairness page: who is hurting whom. Besides the demo tenants (their startup
// instances write engine metrics every few seconds), this spec places a dozen tenants of its own
// and writes their minutes through the engine's own write (so the rollups have them): one waits
// 5 s for its claims, over the default 1 s objective, because its steps waited for step slots,
// and must be listed first with that reason. Checked in the picture: the explanation lines, the
// lag chart's labels apart, the share tooltip inside its card, the table inside its card at
// 1440 px and scrolling inside it at 390 px; the drill-down; screenshots kept at both widths.
import { expect, test, type Locator, type Page } from "@playwright/test";
import { randomBytes } from "node:crypto";
import { TenantMetrics } from "../engine/metrics/tenant-metrics.ts";
import { writeTenantMetrics } from "../engine/storage/metrics.ts";
import { DEMO_OPERATOR, DEMO_TENANTS, signIn, withDb } from "./fixtures.ts";

const RUN = randomBytes(3).toString("hex");
/** Eleven steady tenants with long names (for the labels) and one that waits. */
const STEADY = Array.from({ length: 11 }, (_, i) => `fair-${RUN}-steady-tenant-${String(i + 1).padStart(2, "0")}`);
const SLOW = `fair-${RUN}-slow`;

test.beforeAll(async () => {
  await withDb(async (db) => {
    const ids = [...STEADY, SLOW];
    await db.query("INSERT INTO tenants (id, name) SELECT id, id FROM unnest($1::text[]) AS id", [ids]);
    await db.query("INSERT INTO tenant_storage_placements (tenant_id, backend_id, epoch) SELECT id, 'primary', 1 FROM unnest($1::text[]) AS id", [ids]);
    const metrics = new TenantMetrics();
    const now = Date.now();
    for (let minute = 0; minute < 5; minute++) {
      const at = now - minute * 60_000;
      STEADY.forEach((tenant, i) => {
        for (let n = 0; n < 20 + 10 * i; n++) metrics.claimed(tenant, 5, at);
        metrics.backlog(tenant, i % 3, at);
      });
      // Its claims wait 5 s: its steps queue for step slots, a few are rate limited.
      for (let n = 0; n < 30; n++) metrics.claimed(SLOW, 4_000, at);
      for (let n = 0; n < 40; n++) metrics.step(SLOW, 32, true, at);
      for (let n = 0; n < 3; n++) metrics.deferred(SLOW, "rate_limit", at);
      metrics.backlog(SLOW, 25, at);
    }
    await writeTenantMetrics(db, metrics.drain());
  });
});

/** A chart by its accessible wrapper, once recharts has drawn its SVG with tick labels. */
async function expectChart(page: Page, label: RegExp, series: string, legend: "recharts" | "list" = "recharts"): Promise<Locator> {
  const chart = page.getByRole("img", { name: label });
  await expect(chart).toBeVisible();
  await expect(chart.locator("svg.recharts-surface").first()).toBeVisible();
  await expect.poll(() => chart.locator(series).count()).toBeGreaterThan(0);
  await expect.poll(() => chart.locator(".recharts-cartesian-axis-tick-value").count()).toBeGreaterThan(1);
  // The share and backlog charts list their series above the plot, where long names wrap.
  if (legend === "list") await expect(chart.locator("xpath=..").getByRole("list", { name: "Series" })).toBeVisible();
  else await expect(chart.locator(".recharts-legend-item").first()).toBeVisible();
  return chart;
}

type Box = { x: number; y: number; width: number; height: number };
const overlaps = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const inside = (inner: Box, outer: Box) =>
  inner.x >= outer.x - 0.5 && inner.y >= outer.y - 0.5 && inner.x + inner.width <= outer.x + outer.width + 0.5 && inner.y + inner.height <= outer.y + outer.height + 0.5;

const table = (page: Page) => page.getByRole("table", { name: "Noisiest tenants" });
const rowOf = (page: Page, tenant: string) => table(page).getByRole("row").filter({ has: page.getByRole("rowheader", { name: tenant, exact: true }) });
const cardOf = (page: Page, heading: string) => page.locator("section.card").filter({ has: page.getByRole("heading", { name: heading, exact: true }) });

test("at 1440 px: the tenant over its objective first with the ledger's reason, the figures explained, legible charts, the table inside its card", async ({ page }, testInfo) => {
  test.setTimeout(90_000);
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, DEMO_OPERATOR);
  await page.goto("/ops/fairness");
  await expect(page).toHaveTitle(/^Fairness/);
  await expect(rowOf(page, SLOW)).toHaveCount(1, { timeout: 20_000 });

  // Breaches first: no row over its objective comes after one within it, and ours is among the first.
  const flags = await table(page).locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.hasAttribute("data-breach")));
  expect(flags.indexOf(false) === -1 || flags.lastIndexOf(true) < flags.indexOf(false), `breach rows ${JSON.stringify(flags)}`).toBe(true);
  const slow = rowOf(page, SLOW);
  await expect(slow).toHaveAttribute("data-breach", "true");
  const cells = slow.getByRole("cell");
  await expect(cells.nth(0).locator('[data-lag="p99"]')).toHaveText("≤ 5 s");
  await expect(cells.nth(0)).toContainText("/ 1 s");
  await expect(cells.nth(0)).toContainText("over objective");
  // Its reason, as the ledger words it, the largest count first: 200 step-slot waits, then 15 rate-limit deferrals.
  await expect(cells.nth(1).getByRole("listitem").first()).toHaveText("step slots: 200 steps waited for a step slot");
  await expect(cells.nth(1).getByRole("listitem").nth(1)).toHaveText("rate limits and budgets: 15 steps deferred by a rate limit");
  await expect(rowOf(page, STEADY.at(-1)!)).not.toHaveAttribute("data-breach");

  // The demand-independent figures beside Jain's index, each with its line of explanation.
  const glance = page.getByRole("region", { name: "Fairness at a glance" });
  await expect(glance.getByText("Of all claims in the range, whatever each tenant asked for: near 100 % means one tenant holds the engines.")).toBeVisible();
  await expect(glance.getByText(/^Tenants whose schedule lag p99 \(due to claimed\) is above their objective \(default 1 s\): they waited too long, whatever their share\.$/)).toBeVisible();
  await expect(glance.getByText(/^Demand-relative: 1\.00 when every tenant got the same fraction of what it asked for/)).toBeVisible();
  await expect(page.getByTestId("largest-share")).toHaveText(/^\d+\.\d %\s+\S+$/);
  await expect(page.getByTestId("breaches")).toHaveText(/^[1-9]\d* of \d+ tenants$/);

  // The table fits its card: nothing to scroll sideways at 1440 px.
  const wrap = table(page).locator("xpath=..");
  const [scrollWidth, clientWidth] = await wrap.evaluate((el) => [el.scrollWidth, el.clientWidth]);
  expect(scrollWidth, "the table's width inside its card").toBeLessThanOrEqual(clientWidth);

  // The lag chart: a row per tenant, so no two tenant labels overlap.
  const lag = await expectChart(page, /^p50 and p99 schedule lag per tenant/, ".recharts-bar-rectangle");
  // Every tick label of the chart (tenants on one axis, lag values on the other), the tenants' at least six.
  const labels = lag.locator(".recharts-cartesian-axis-tick-value");
  await expect.poll(async () => (await labels.allTextContents()).filter((text) => !/^\d+(\.\d+)? (ms|s)$/.test(text)).length).toBeGreaterThan(5);
  const boxes = (await labels.evaluateAll((els) => els.map((el) => el.getBoundingClientRect().toJSON()))) as Box[];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) expect(overlaps(boxes[i]!, boxes[j]!), `labels ${i} and ${j} overlap`).toBe(false);

  // The share chart: the top 8 and the others; its tooltip (a row per series) stays inside the card.
  const share = await expectChart(page, /^Share of claims against share of demand per minute/, ".recharts-line-curve", "list");
  // Below the fold at 900 px: into view first, then over the latest minutes (a move, then another, as a pointer would).
  await share.scrollIntoViewIfNeeded();
  const plot = (await share.locator(".recharts-cartesian-grid").boundingBox())!;
  await page.mouse.move(plot.x + plot.width * 0.5, plot.y + plot.height * 0.5);
  await page.mouse.move(plot.x + plot.width * 0.97, plot.y + plot.height * 0.9, { steps: 5 });
  const tooltip = page.getByTestId("share-tooltip");
  await expect(tooltip).toBeVisible();
  await expect(tooltip.getByRole("row")).toHaveCount(10); // a header and 8 tenants + others
  await expect(tooltip).toContainText(/others \(\d+\)/);
  expect(inside((await tooltip.boundingBox())!, (await cardOf(page, "Share of claims against share of demand").boundingBox())!), "tooltip inside its card").toBe(true);
  await page.screenshot({ path: testInfo.outputPath("fairness-1440.png"), fullPage: true });

  await expectChart(page, /^Jain's fairness index per minute/, ".recharts-line-curve");
  await expectChart(page, /^Backlog per tenant per minute/, ".recharts-area-area", "list");

  // The drill-down, from the row: its lag against its objective, why, its limits.
  await slow.getByRole("link", { name: SLOW }).click();
  await expect(page).toHaveURL(new RegExp(`/ops/fairness/${SLOW}\\?range=1h$`));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Fairness: ${SLOW}`);
  await expect(page.getByTestId("tenant-p99")).toHaveText(/^≤ 5 s\s+\/ 1 s \(default\)$/);
  await expect(page.getByText("over objective", { exact: true })).toBeVisible();
  await expect(page.getByRole("region", { name: "This tenant at a glance" }).getByText("step slots: 200 steps waited for a step slot")).toBeVisible();
  await expectChart(page, /^Schedule lag p50 and p99 per minute against the objective 1 s/, ".recharts-line-curve");
  await expectChart(page, /^Deferrals by reason per minute: 215 in the range/, ".recharts-bar-rectangle");
  await expectChart(page, /^Share of claims and of demand per minute/, ".recharts-line-curve");
  await expect(cardOf(page, "Open breakers")).toContainText("None open.");
  await expect(cardOf(page, "Limits")).toContainText("Lag p99 objective1 s (default)");
  await page.screenshot({ path: testInfo.outputPath("fairness-tenant-1440.png"), fullPage: true });

  // Linked from the tenant's own page.
  await page.goto(`/ops/tenants/${SLOW}`);
  await page.getByRole("link", { name: /^Its fairness/ }).click();
  await expect(page).toHaveURL(new RegExp(`/ops/fairness/${SLOW}$`));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Fairness: ${SLOW}`);
});

test("at 390 px: the page fits the screen and the table scrolls inside its card", async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, DEMO_OPERATOR);
  for (const [path, name] of [["/ops/fairness", "fairness-390.png"], [`/ops/fairness/${SLOW}`, "fairness-tenant-390.png"]] as const) {
    await page.goto(path);
    await expect(page.getByRole("img").first()).toBeVisible({ timeout: 20_000 });
    await expect(page.locator("svg.recharts-surface").first()).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.scrollWidth), `${path} fits 390 px`).toBeLessThanOrEqual(390);
    await page.screenshot({ path: testInfo.outputPath(name), fullPage: true });
  }
  await page.goto("/ops/fairness");
  await expect(rowOf(page, SLOW)).toHaveCount(1, { timeout: 20_000 });
  const card = (await cardOf(page, "Noisiest tenants").boundingBox())!;
  expect(card.x + card.width).toBeLessThanOrEqual(390);
  const [scrollWidth, clientWidth] = await table(page).locator("xpath=..").evaluate((el) => [el.scrollWidth, el.clientWidth]);
  expect(scrollWidth).toBeGreaterThan(clientWidth);
});

test("the operator sees every demo tenant's lag from the engine's own metrics, and changes the range", async ({ page }) => {
  test.setTimeout(90_000);
  await signIn(page, DEMO_OPERATOR);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Fairness" }).click();
  await expect(page).toHaveURL(/\/ops\/fairness$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Fairness");

  // The engine flushes its metrics every 5 s: each demo tenant's drill-down has its claims' lag.
  for (const tenant of DEMO_TENANTS) {
    await expect(async () => {
      await page.goto(`/ops/fairness/${tenant.slug}`);
      await expect(page.getByTestId("tenant-p99")).toHaveText(/^(≤|>) \d/, { timeout: 3_000 });
    }).toPass({ timeout: 45_000, intervals: [1_000, 3_000, 5_000] });
  }
  await page.goto("/ops/fairness");
  const ranges = page.getByRole("group", { name: "Time range" });
  await expect(ranges.getByRole("button", { name: "1 h" })).toHaveAttribute("aria-pressed", "true");
  await ranges.getByRole("button", { name: "15 min" }).click();
  await expect(page).toHaveURL(/\/ops\/fairness\?range=15m$/);
  await expect(ranges.getByRole("button", { name: "15 min" })).toHaveAttribute("aria-pressed", "true");
  await expect(ranges.getByRole("button", { name: "1 h" })).toHaveAttribute("aria-pressed", "false");
  await expect(page.getByText(/active in the last 15 minutes/)).toBeVisible();

  // The range survives a reload.
  await page.reload();
  await expect(page.getByRole("group", { name: "Time range" }).getByRole("button", { name: "15 min" })).toHaveAttribute("aria-pressed", "true");
  await expect(table(page)).toBeVisible();
});

for (const email of ["admin@acme.test", "member@acme.test"]) {
  test(`${email} gets the ordinary not-found page for the fairness pages`, async ({ page }) => {
    await signIn(page, email);
    await expect(page.getByRole("link", { name: "Fairness" })).toHaveCount(0);
    for (const path of ["/ops/fairness", "/ops/fairness/acme"]) {
      const response = await page.goto(path);
      expect(response?.status()).toBe(404);
      await expect(page.getByRole("heading", { level: 1 })).toHaveText("Page not found");
      await expect(page.getByRole("table", { name: "Noisiest tenants" })).toHaveCount(0);
    }
  });
}
