// The rest of the operator console: a tenant created with its first admin (whose one-time
// password signs them in), its limits set on its own page, every change in the filterable audit
// log; an open breaker reset from the all-tenants breakers page, after which the tenant's own page
// shows it closed; and tenant users get the ordinary not-found page for every operator route.
import { expect, test, type Page } from "@playwright/test";
import pg from "pg";
import { E2E_SERVER_ENV } from "./env.ts";
import { DEMO_OPERATOR, mainText, signIn } from "./fixtures.ts";

const rowOf = (page: Page, table: string, cell: string) =>
  page.getByRole("table", { name: table, exact: true }).getByRole("row").filter({ has: page.getByRole("cell", { name: cell, exact: true }) });

test("an operator creates a tenant with its first admin, sets its limits, and finds every change in the audit log", async ({ page }, testInfo) => {
  test.setTimeout(90_000);
  const slug = `ops-${Date.now().toString(36)}`;
  const name = `Console ${slug}`;
  const email = `admin-${slug}@bulkhead.test`;
  let password = "";

  await test.step("create the tenant: the new admin's one-time password is shown once", async () => {
    await signIn(page, DEMO_OPERATOR);
    await expect(page).toHaveURL(/\/ops$/);
    await page.getByRole("link", { name: "Create a tenant", exact: true }).click();
    await expect(page).toHaveURL(/\/ops\/tenants\/new$/);
    const form = page.getByRole("form", { name: "Create a tenant", exact: true });
    await form.getByLabel("Slug", { exact: true }).fill(slug);
    await form.getByLabel("Name", { exact: true }).fill(name);
    await form.getByRole("combobox", { name: "Backend", exact: true }).selectOption("primary");
    await form.getByLabel("First admin email", { exact: true }).fill(email);
    await form.getByRole("button", { name: "Create tenant", exact: true }).click();

    const secret = page.getByLabel("One-time password", { exact: true });
    await expect(secret).toHaveValue(/^\S{8,}$/);
    password = await secret.inputValue();
    await expect(page.getByRole("region", { name: `Account created for ${email} shown once`, exact: true })).toBeVisible();

    // Once dismissed, it is gone.
    await page.getByRole("button", { name: "Done", exact: true }).click();
    await expect(page.getByLabel("One-time password", { exact: true })).toHaveCount(0);
    await expect(page.getByRole("main")).not.toContainText(password);

    // The tenants table finds it.
    await page.goto(`/ops?q=${slug}`);
    const row = page.getByRole("table", { name: "Tenants", exact: true }).locator(`tr[data-tenant="${slug}"]`);
    await expect(row).toHaveCount(1);
    await expect(row.getByRole("cell").nth(0)).toContainText(name);
    await expect(row.getByRole("cell").nth(1)).toContainText("primary");
    await expect(row.getByRole("cell").nth(1)).toContainText("epoch 1");

    await row.getByRole("link", { name, exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`/ops/tenants/${slug}$`));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(name);
    await expect(page.locator(".page-header")).toContainText("1 member");
    await expect(page.getByLabel("Current placement")).toContainText("Backend primary · epoch 1");
  });

  await test.step("set the claim cap and the in-flight limit: saved across a reload", async () => {
    const caps = page.getByRole("form", {
      name: "Claim cap, in-flight limit, step limit, outbound requests per host, API requests per second, cron schedules and webhooks per second", exact: true,
    });
    const claimCap = caps.getByRole("spinbutton", { name: "Claim cap", exact: true });
    const inFlight = caps.getByRole("spinbutton", { name: "In-flight limit", exact: true });
    // Empty: the engine defaults, said in the placeholders.
    await expect(claimCap).toHaveValue("");
    await expect(claimCap).toHaveAttribute("placeholder", /^default: (no cap|\d+)$/);
    await expect(inFlight).toHaveAttribute("placeholder", /^default: \d+$/);
    await claimCap.fill("3");
    await inFlight.fill("5");
    await caps.getByRole("button", { name: "Save limits", exact: true }).click();
    await expect(page.getByRole("status").filter({ hasText: "Saved: claim cap 3, in-flight limit 5, step limit the default (32), outbound requests per host the default (16), API rate the default (50/s), cron schedules the default (1,000), webhook rate the default (100/s)." })).toBeVisible();

    await page.reload();
    await expect(page.getByRole("spinbutton", { name: "Claim cap", exact: true })).toHaveValue("3");
    await expect(page.getByRole("spinbutton", { name: "In-flight limit", exact: true })).toHaveValue("5");
    await expect(page.getByRole("spinbutton", { name: "Outbound requests per host", exact: true })).toHaveAttribute("placeholder", "default: 16");
    await expect(page.getByRole("spinbutton", { name: "API requests per second", exact: true })).toHaveAttribute("placeholder", "default: 50");
    await caps.screenshot({ path: testInfo.outputPath("tenant-limits.png") });
    await testInfo.attach("tenant limits", { path: testInfo.outputPath("tenant-limits.png"), contentType: "image/png" });
  });

  await test.step("set a budget and a rate limit: both shown", async () => {
    const limits = page.locator("section", { has: page.getByRole("heading", { name: "Limits", exact: true }) });
    await expect(limits).toContainText("No budget");
    const budget = page.getByRole("form", { name: "Step budget", exact: true });
    await budget.getByRole("spinbutton", { name: "Steps per period", exact: true }).fill("500");
    await budget.getByRole("spinbutton", { name: "Period, seconds", exact: true }).fill("3600");
    await budget.getByRole("button", { name: "Save budget", exact: true }).click();
    await expect(limits).toContainText("0 of 500 steps used in this period of 1 h");

    const add = page.getByRole("form", { name: "Add a rate limit", exact: true });
    await add.getByRole("textbox", { name: "Key", exact: true }).fill("smtp");
    await add.getByRole("spinbutton", { name: "Max per window", exact: true }).fill("10");
    await add.getByRole("spinbutton", { name: "Window, ms", exact: true }).fill("60000");
    await add.getByRole("button", { name: "Save rate limit", exact: true }).click();
    const rateLimit = rowOf(page, "Rate limits", "smtp").getByRole("cell");
    await expect(rateLimit.nth(1)).toHaveText("10");
    await expect(rateLimit.nth(2)).toHaveText("1 min");
    await expect(rateLimit.nth(3)).toHaveText("0");

    // Still there after a reload, and the tenant's recent activity lists the changes.
    await page.reload();
    await expect(limits).toContainText("0 of 500 steps used in this period of 1 h");
    await expect(rowOf(page, "Rate limits", "smtp")).toHaveCount(1);
    for (const action of ["tenant.create", "member.add", "limits.set", "budget.set", "rate_limit.set"]) {
      await expect(rowOf(page, "Recent activity", action)).toContainText(DEMO_OPERATOR);
    }
  });

  await test.step("the audit log, filtered by the tenant, lists every change with the operator as actor", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log", exact: true }).click();
    await expect(page).toHaveURL(/\/ops\/audit$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Audit log");
    const filters = page.getByRole("search", { name: "Filter the audit log", exact: true });
    // Typed, with suggestions from the server (an input with suggestions is a combobox).
    await filters.getByRole("combobox", { name: "Tenant", exact: true }).fill(slug);
    await expect(page).toHaveURL(new RegExp(`\\?tenant=${slug}$`));

    const log = page.getByRole("table", { name: "Audit log", exact: true });
    for (const action of ["tenant.create", "user.create", "member.add", "limits.set", "budget.set", "rate_limit.set"]) {
      const row = rowOf(page, "Audit log", action);
      await expect(row).toHaveCount(1);
      await expect(row.getByRole("cell").nth(1)).toHaveText(DEMO_OPERATOR);
      await expect(row.getByRole("cell").nth(2)).toHaveText(slug);
    }
    await expect(log.getByRole("row")).toHaveCount(7); // the header and the six entries
    await expect(rowOf(page, "Audit log", "limits.set")).toContainText(
      // The cell shows the start of the details (they are cut with an ellipsis past that).
      '{"claim_cap":3,"max_steps":null,"cron_schedules":null,"retention_days":null,"max_concurrency":5,"api_rate_per_sec":null,"lag_objective_ms":null,',
    );

    // The action filter matches prefixes, the actor filter parts of the actor.
    // (An input with suggestions is a combobox.)
    await filters.getByRole("combobox", { name: "Action", exact: true }).fill("rate_limit.");
    await expect(log.getByRole("row")).toHaveCount(2);
    await expect(rowOf(page, "Audit log", "rate_limit.set")).toContainText('"key":"smtp"');
    await filters.getByRole("searchbox", { name: "Actor", exact: true }).fill("nobody-at-all");
    await expect(page.getByText("No entries match these filters.")).toBeVisible();

    // The address keeps the filters.
    await page.reload();
    await expect(page.getByRole("searchbox", { name: "Actor", exact: true })).toHaveValue("nobody-at-all");
    await expect(page.getByText("No entries match these filters.")).toBeVisible();
    await page.getByRole("button", { name: "Clear filters", exact: true }).click();
    await expect(log.getByRole("row").nth(1)).toBeVisible();

    // Part of an id, or an id no tenant has, does not filter; the latter says so.
    await filters.getByRole("combobox", { name: "Tenant", exact: true }).fill(`${slug}-nobody`);
    await expect(page.getByText(`No tenant has the id “${slug}-nobody”`)).toBeVisible();
    await expect(log.getByRole("row").nth(1)).toBeVisible();
  });

  await test.step("the new admin signs in with the one-time password and lands on their tenant", async () => {
    await page.context().clearCookies();
    await page.goto("/signin");
    await signIn(page, email, password);
    await expect(page).toHaveURL(new RegExp(`/t/${slug}$`));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(name);
    await expect(page.getByRole("link", { name: "Operator console" })).toHaveCount(0);
  });
});

/** Opens a breaker the way engines record one (acme lives on the primary backend, database bulkhead). */
async function openAcmeBreaker(handler: string) {
  const client = new pg.Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${E2E_SERVER_ENV.BULKHEAD_PG_PORT}/bulkhead` });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO circuit_breakers (tenant_id, handler, failure_count, opened_at) VALUES ('acme', $1, 5, now())
       ON CONFLICT (tenant_id, handler) DO UPDATE SET opened_at = now()`,
      [handler],
    );
  } finally {
    await client.end();
  }
}

test("an operator resets an open breaker after confirming, and the tenant's page shows it closed", async ({ page }) => {
  const handler = `ops_console_${Date.now().toString(36)}`;
  await openAcmeBreaker(handler);

  await signIn(page, DEMO_OPERATOR);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Breakers", exact: true }).click();
  await expect(page).toHaveURL(/\/ops\/breakers$/);
  await page.getByRole("searchbox", { name: "Handler", exact: true }).fill(handler);
  const open = rowOf(page, "Open breakers", handler);
  await expect(open).toHaveCount(1);
  await expect(open.getByRole("cell").nth(0)).toHaveText("acme");
  await expect(open.getByRole("cell").nth(2)).toHaveText("open");

  await open.getByRole("button", { name: `Reset ${handler} of acme`, exact: true }).click();
  const confirm = page.getByRole("group", { name: `Confirm: Reset ${handler} of acme`, exact: true });
  await expect(confirm).toContainText("Reset?");
  await confirm.getByRole("button", { name: "Confirm", exact: true }).click();

  await expect(page.getByText(`No open breakers for handlers matching ${handler}.`)).toBeVisible();
  const reset = rowOf(page, "Recent resets", handler);
  await expect(reset.getByRole("cell").nth(0)).toHaveText("acme");
  await expect(reset.getByRole("cell").nth(2)).toHaveText(DEMO_OPERATOR);

  // The tenant's admin sees it closed (no longer open), and who reset it.
  await page.context().clearCookies();
  await page.goto("/signin");
  await signIn(page, "admin@acme.test");
  await page.goto("/t/acme/breakers");
  const openTable = page.getByRole("table", { name: "Open breakers", exact: true });
  await expect(page.getByText("No open breakers: every handler is healthy.").or(openTable)).toBeVisible();
  await expect(openTable.getByRole("row").filter({ hasText: handler })).toHaveCount(0);
  await expect(rowOf(page, "Recent resets", handler)).toContainText(DEMO_OPERATOR);
});

test("a tenant that does not exist gets the ordinary not-found page in the console too", async ({ page }) => {
  await signIn(page, DEMO_OPERATOR);
  const missing = await page.goto("/no-such-page");
  expect(missing?.status()).toBe(404);
  const notFound = await mainText(page);
  const response = await page.goto("/ops/tenants/no-such-tenant");
  expect(response?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Page not found");
  expect(await mainText(page)).toBe(notFound);
});

const OPERATOR_ROUTES = ["/ops", "/ops/breakers", "/ops/fairness", "/ops/audit", "/ops/tenants/acme", "/ops/tenants/new", "/ops/moves"];

for (const user of ["admin@acme.test", "member@acme.test"]) {
  test(`${user} gets the ordinary not-found page for every operator route`, async ({ page }) => {
    await signIn(page, user);
    const missing = await page.goto("/no-such-page");
    expect(missing?.status()).toBe(404);
    const notFound = await mainText(page);

    for (const route of OPERATOR_ROUTES) {
      const response = await page.goto(route);
      expect(response?.status(), route).toBe(404);
      await expect(page.getByRole("heading", { level: 1 })).toHaveText("Page not found");
      expect(await mainText(page), route).toBe(notFound);
    }
    await expect(page.getByRole("link", { name: "Audit log" })).toHaveCount(0);
  });
}
