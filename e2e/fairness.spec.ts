// The operator's fairness page: the demo tenants' engine metrics (written every few seconds while
// their startup instances run) fill the charts and the noisiest-tenants table; the range is a
// button in the address; tenant users get the ordinary not-found page.
import { expect, test, type Locator, type Page } from "@playwright/test";
import { DEMO_OPERATOR, DEMO_TENANTS, signIn } from "./fixtures.ts";

/** A chart by its accessible wrapper, once recharts has drawn its SVG with tick labels. */
async function expectChart(page: Page, label: RegExp, series: string): Promise<Locator> {
  const chart = page.getByRole("img", { name: label });
  await expect(chart).toBeVisible();
  await expect(chart.locator("svg.recharts-surface").first()).toBeVisible();
  await expect.poll(() => chart.locator(series).count()).toBeGreaterThan(0);
  await expect.poll(() => chart.locator(".recharts-cartesian-axis-tick-value").count()).toBeGreaterThan(1);
  await expect(chart.locator(".recharts-legend-item").first()).toBeVisible();
  return chart;
}

test("the operator sees every demo tenant's claims, demand, lag and backlog, and changes the range", async ({ page }) => {
  test.setTimeout(90_000);
  await signIn(page, DEMO_OPERATOR);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Fairness" }).click();
  await expect(page).toHaveURL(/\/ops\/fairness$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Fairness");
  await expect(page).toHaveTitle(/^Fairness/);

  // The engine flushes its metrics every 5 s and the page refetches every 10 s: wait for all three.
  const table = page.getByRole("table", { name: "Noisiest tenants" });
  const rowOf = (tenant: string) => table.getByRole("row").filter({ has: page.getByRole("rowheader", { name: tenant, exact: true }) });
  await expect(async () => {
    await page.reload();
    for (const tenant of DEMO_TENANTS) await expect(rowOf(tenant.slug)).toHaveCount(1, { timeout: 2_000 });
  }).toPass({ timeout: 45_000, intervals: [1_000, 3_000, 5_000] });

  for (const tenant of DEMO_TENANTS) {
    const cells = rowOf(tenant.slug).getByRole("cell");
    await expect(cells.nth(0)).toHaveText(/^\d+\.\d %$/); // share of demand
    await expect(cells.nth(2)).not.toHaveText("0"); // claimed
    await expect(cells.nth(9)).toHaveText(/^(≤|>) \d/); // p50, e.g. "≤ 250 ms"
  }

  await expectChart(page, /^Share of claims against share of demand per minute/, ".recharts-line-curve");
  await expectChart(page, /^Jain's fairness index per minute/, ".recharts-line-curve");
  const lag = await expectChart(page, /^p50 and p99 schedule lag per tenant/, ".recharts-bar-rectangle");
  for (const tenant of DEMO_TENANTS) await expect(lag.locator(".recharts-cartesian-axis-tick-value", { hasText: tenant.slug })).toHaveCount(1);
  await expectChart(page, /^Backlog per tenant per minute/, ".recharts-area-area");

  const ranges = page.getByRole("group", { name: "Time range" });
  await expect(ranges.getByRole("button", { name: "1 h" })).toHaveAttribute("aria-pressed", "true");
  await ranges.getByRole("button", { name: "15 min" }).click();
  await expect(page).toHaveURL(/\/ops\/fairness\?range=15m$/);
  await expect(ranges.getByRole("button", { name: "15 min" })).toHaveAttribute("aria-pressed", "true");
  await expect(ranges.getByRole("button", { name: "1 h" })).toHaveAttribute("aria-pressed", "false");
  await expect(page.getByText(/active in the last 15 minutes/)).toBeVisible();
  for (const tenant of DEMO_TENANTS) await expect(rowOf(tenant.slug)).toHaveCount(1);

  // The range survives a reload.
  await page.reload();
  await expect(page.getByRole("group", { name: "Time range" }).getByRole("button", { name: "15 min" })).toHaveAttribute("aria-pressed", "true");
  await expect(table).toBeVisible();
});

for (const email of ["admin@acme.test", "member@acme.test"]) {
  test(`${email} gets the ordinary not-found page for the fairness page`, async ({ page }) => {
    await signIn(page, email);
    await expect(page.getByRole("link", { name: "Fairness" })).toHaveCount(0);
    const response = await page.goto("/ops/fairness");
    expect(response?.status()).toBe(404);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Page not found");
    await expect(page.getByRole("table", { name: "Noisiest tenants" })).toHaveCount(0);
  });
}
