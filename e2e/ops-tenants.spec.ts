// The operator console's tenants table at more than a page of tenants: two keystrokes find a
// tenant among them (searched on the server as you type), its page offers Move, its limits and
// its breakers; the create-tenant page makes a tenant the search then finds; the moves page
// follows a move to done. Screenshots at 1440 × 900 are kept with the results.
import { expect, test, type Page } from "@playwright/test";
import pg from "pg";
import { E2E_SERVER_ENV } from "./env.ts";
import { DEMO_OPERATOR, bulkheadCli, signIn } from "./fixtures.ts";

test.use({ viewport: { width: 1440, height: 900 } });

const BULK = 120;

/**
 * More tenants than a page holds, in two statements as a platform's would be made in bulk:
 * slugs "zz-bulk-001".., named "Zz bulk 001".. so they sort after the demo tenants, which other
 * specs expect on the first page. Placed on the primary at epoch 1, as a new tenant is.
 */
test.beforeAll(async () => {
  const client = new pg.Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${E2E_SERVER_ENV.BULKHEAD_PG_PORT}/bulkhead` });
  await client.connect();
  try {
    const slug = `'zz-bulk-' || lpad(g::text, 3, '0')`;
    await client.query(
      `INSERT INTO tenants (id, name) SELECT ${slug}, 'Zz bulk ' || lpad(g::text, 3, '0') FROM generate_series(1, $1::int) AS g ON CONFLICT DO NOTHING`,
      [BULK],
    );
    await client.query(
      `INSERT INTO tenant_storage_placements (tenant_id, backend_id, epoch) SELECT ${slug}, 'primary', 1 FROM generate_series(1, $1::int) AS g ON CONFLICT DO NOTHING`,
      [BULK],
    );
  } finally {
    await client.end();
  }
});

const tenantRow = (page: Page, slug: string) => page.getByRole("table", { name: "Tenants", exact: true }).locator(`tr[data-tenant="${slug}"]`);
const search = (page: Page) => page.getByRole("search", { name: "Search tenants", exact: true }).getByRole("searchbox", { name: "Search", exact: true });
const status = (page: Page) => page.getByRole("region", { name: "Tenants", exact: true }).getByRole("status");

test("two keystrokes find a tenant among more than a page, whose page has Move, its limits and its breakers", async ({ page }, testInfo) => {
  const slug = `qv-${Date.now().toString(36)}`;
  await bulkheadCli("tenants", "create", slug, "--name", `Quiver ${slug}`);

  await signIn(page, DEMO_OPERATOR);
  await expect(page).toHaveURL(/\/ops$/);
  // Paged: 50 of every tenant, the next page one click away.
  await expect(status(page)).toContainText(/^1–50 of \d+ tenants/);
  await page.getByRole("button", { name: "Next", exact: true }).click();
  await expect(status(page)).toContainText(/^51–100 of /);
  await page.getByRole("button", { name: "Previous", exact: true }).click();
  await expect(status(page)).toContainText(/^1–50 of /);

  // Ordered by claims of the hour, then back by name.
  const table = page.getByRole("table", { name: "Tenants", exact: true });
  await table.getByRole("button", { name: /^Claims/ }).click();
  await expect(table.getByRole("columnheader", { name: /^Claims/ })).toHaveAttribute("aria-sort", "descending");
  await expect(page).toHaveURL(/\?sort=claims$/);
  await page.getByRole("combobox", { name: "Order by", exact: true }).selectOption("name");
  await expect(table.getByRole("columnheader", { name: /^Tenant/ })).toHaveAttribute("aria-sort", "ascending");

  // Two keystrokes, typed as a person would: the server's answer is that one tenant.
  await search(page).pressSequentially("qv", { delay: 80 });
  await expect(page).toHaveURL(/\?q=qv$/);
  await expect(table.locator("tbody tr")).toHaveCount(1);
  const row = tenantRow(page, slug);
  await expect(row).toContainText(`Quiver ${slug}`);
  await expect(row.getByRole("cell").nth(1)).toContainText("primary");
  await expect(row.getByRole("cell").nth(1)).toContainText("epoch 1");
  await expect(row.getByRole("cell").nth(4)).toHaveText("none open");
  await expect(row.getByRole("cell").nth(5)).toHaveText("defaults");
  await expect(status(page)).toContainText("1–1 of 1 matching");
  await page.screenshot({ path: testInfo.outputPath("ops-tenants-search.png"), fullPage: true });

  // A search that matches nothing says so.
  await search(page).fill("qv-no-such-tenant");
  await expect(page.getByText("No tenant’s slug or name contains “qv-no-such-tenant”.")).toBeVisible();
  await search(page).fill("qv");
  await expect(table.locator("tbody tr")).toHaveCount(1);

  await row.getByRole("link", { name: `Quiver ${slug}`, exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/ops/tenants/${slug}$`));
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Quiver ${slug}`);
  const placement = page.getByRole("region", { name: "Placement", exact: true });
  await expect(placement.getByLabel("Current placement")).toContainText("Backend primary · epoch 1 · serving");
  await expect(placement.getByRole("form", { name: `Move ${slug}`, exact: true })).toBeVisible();
  await expect(page.getByRole("region", { name: "Limits", exact: true }).getByRole("spinbutton", { name: "Claim cap", exact: true })).toBeVisible();
  await expect(page.getByRole("region", { name: "The last hour", exact: true })).toContainText("Every limit is the engine default.");
  const breakers = page.getByRole("region", { name: "Breakers", exact: true });
  await expect(breakers).toContainText("No open breakers: every handler of this tenant is healthy.");
  await page.screenshot({ path: testInfo.outputPath("ops-tenant-page.png"), fullPage: true });

  await breakers.getByRole("link", { name: "Its breakers and recent resets on the Breakers page", exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/ops/breakers\\?tenant=${slug}$`));
  await expect(page.getByRole("searchbox", { name: "Tenant", exact: true })).toHaveValue(slug);
});

test("the create-tenant page makes a tenant, and the search then finds it", async ({ page }, testInfo) => {
  const slug = `qn-${Date.now().toString(36)}`;
  await signIn(page, DEMO_OPERATOR);
  await page.getByRole("navigation", { name: "Tenants", exact: true }).getByRole("link", { name: "Create a tenant", exact: true }).click();
  await expect(page).toHaveURL(/\/ops\/tenants\/new$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("New tenant");

  const form = page.getByRole("form", { name: "Create a tenant", exact: true });
  await form.getByLabel("Slug", { exact: true }).fill(slug);
  await form.getByLabel("Name", { exact: true }).fill(`Quince ${slug}`);
  // A new account: the demo users' tenants stay as the other specs expect them.
  await form.getByLabel("First admin email", { exact: true }).fill(`admin-${slug}@bulkhead.test`);
  await form.getByRole("button", { name: "Create tenant", exact: true }).click();
  await expect(page.getByRole("status").filter({ hasText: "Tenant created" })).toContainText(`Quince ${slug} (${slug}) is on primary`);
  await expect(page.getByLabel("One-time password", { exact: true })).toHaveValue(/^\S{8,}$/);
  await page.screenshot({ path: testInfo.outputPath("ops-tenant-new.png"), fullPage: true });

  // "new" names this page, so no tenant may have it.
  await page.getByRole("button", { name: "Done", exact: true }).click();
  await form.getByLabel("Slug", { exact: true }).fill("new");
  await form.getByLabel("First admin email", { exact: true }).fill(`admin-${slug}@bulkhead.test`);
  await form.getByRole("button", { name: "Create tenant", exact: true }).click();
  await expect(page.getByRole("main").getByRole("alert")).toHaveText('Could not create the tenant: tenant slug "new" is reserved: choose another');

  await page.getByRole("link", { name: "← All tenants", exact: true }).click();
  await expect(page).toHaveURL(/\/ops$/);
  await search(page).pressSequentially("qn", { delay: 80 });
  await expect(tenantRow(page, slug)).toContainText(`Quince ${slug}`);
  await expect(page.getByRole("table", { name: "Tenants", exact: true }).locator("tbody tr")).toHaveCount(1);
});

test("a move started on the tenant's page is listed on the moves page until it is done", async ({ page }, testInfo) => {
  test.setTimeout(90_000);
  const slug = `qm-${Date.now().toString(36)}`;
  await bulkheadCli("tenants", "create", slug);

  await signIn(page, DEMO_OPERATOR);
  await page.goto(`/ops/tenants/${slug}`);
  const move = page.getByRole("form", { name: `Move ${slug}`, exact: true });
  await move.getByRole("combobox", { name: "Target backend", exact: true }).selectOption("eu-1");
  await move.getByRole("button", { name: `Start move of ${slug} to eu-1`, exact: true }).click();
  await move.getByRole("group", { name: `Confirm: Start move of ${slug} to eu-1`, exact: true }).getByRole("button", { name: "Confirm", exact: true }).click();
  await expect(page.getByRole("status").filter({ hasText: "Move to eu-1 started" })).toBeVisible();

  await page.goto("/ops");
  await page.getByRole("navigation", { name: "Tenants", exact: true }).getByRole("link", { name: "Tenant moves", exact: true }).click();
  await expect(page).toHaveURL(/\/ops\/moves$/);
  const moved = page.getByRole("table", { name: "Tenant moves", exact: true }).getByRole("row").filter({ has: page.getByRole("link", { name: slug, exact: true }) });
  await expect(moved).toContainText("primary → eu-1");
  await expect(moved).toContainText(DEMO_OPERATOR);
  await expect(moved.getByRole("cell").nth(2)).toHaveText("done", { timeout: 30_000 });
  await page.screenshot({ path: testInfo.outputPath("ops-moves.png"), fullPage: true });

  // The tenant's page follows: on eu-1 at the next epoch, its move listed there too.
  await moved.getByRole("link", { name: slug, exact: true }).click();
  await expect(page.getByRole("region", { name: "Placement", exact: true }).getByLabel("Current placement")).toContainText("Backend eu-1 · epoch 2 · serving");
  await expect(page.getByRole("table", { name: "Tenant moves", exact: true }).getByRole("row")).toHaveCount(2);
});

test("the first page of the address's search and order comes with the page, and the fairness figures with theirs: no request for them after load", async ({ page }) => {
  await signIn(page, DEMO_OPERATOR);
  const asked: string[] = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith("/api/trpc/")) asked.push(...decodeURIComponent(url.pathname.slice("/api/trpc/".length)).split(","));
  });
  await page.goto("/ops?q=zz-bulk-00&sort=slug");
  await expect(tenantRow(page, "zz-bulk-001")).toBeVisible();
  await expect(tenantRow(page, "zz-bulk-009")).toBeVisible();
  await expect(tenantRow(page, "zz-bulk-010")).toHaveCount(0);
  // A new search is the table's own request.
  await search(page).fill("zz-bulk-01");
  await expect(tenantRow(page, "zz-bulk-010")).toBeVisible();
  expect(asked.filter((p) => p === "ops.tenantPage")).toHaveLength(1);

  asked.length = 0;
  await page.goto("/ops/fairness?range=15m");
  await expect(page.getByRole("group", { name: "Time range" }).getByRole("button", { name: "15 min" })).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByText(/active in the last 15 minutes/)).toBeVisible();
  expect(asked).not.toContain("ops.fairness");
});
