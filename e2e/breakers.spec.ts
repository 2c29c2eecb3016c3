// A tenant's breakers page: an admin sees an open breaker, resets it with a confirmation, and the
// reset is listed with who did it; a member sees the breaker but cannot reset it.
import { expect, test } from "@playwright/test";
import pg from "pg";
import { E2E_SERVER_ENV } from "./env.ts";
import { signIn } from "./fixtures.ts";

// The demo places initech on the embedded cluster's second backend (database bulkhead_eu1).
const databaseOf = (tenantId: string) => (tenantId === "initech" ? "bulkhead_eu1" : "bulkhead");

async function openBreaker(tenantId: string, handler: string) {
  const client = new pg.Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${E2E_SERVER_ENV.BULKHEAD_PG_PORT}/${databaseOf(tenantId)}` });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO circuit_breakers (tenant_id, handler, failure_count, opened_at) VALUES ($1, $2, 5, now())
       ON CONFLICT (tenant_id, handler) DO UPDATE SET opened_at = now()`,
      [tenantId, handler],
    );
  } finally {
    await client.end();
  }
}

test("an admin resets an open breaker after confirming, and the reset is recorded", async ({ page }) => {
  await openBreaker("initech", "billing_api");
  await signIn(page, "admin@initech.test");
  await page.goto("/t/initech/breakers");
  const table = page.getByRole("table", { name: "Open breakers" });
  await expect(table.getByRole("row", { name: /billing_api/ })).toContainText("open");

  await page.getByRole("button", { name: "Reset billing_api" }).click();
  const confirm = page.getByRole("group", { name: "Confirm: Reset billing_api" });
  await confirm.getByRole("button", { name: /confirm/i }).click();

  await expect(page.getByText("No open breakers: every handler is healthy.")).toBeVisible();
  await expect(page.getByRole("table", { name: "Recent resets" }).getByRole("row", { name: /billing_api/ })).toContainText("admin@initech.test");
});

test("a member sees the tenant's open breakers but is offered no reset", async ({ page }) => {
  await openBreaker("globex", "crm_sync");
  await signIn(page, "member@globex.test");
  await page.goto("/t/globex/breakers");
  await expect(page.getByRole("table", { name: "Open breakers" }).getByRole("row", { name: /crm_sync/ })).toBeVisible();
  await expect(page.getByRole("button", { name: "Reset crm_sync" })).toHaveCount(0);
  await expect(page.getByRole("form", { name: "Set a handler's breaker settings" })).toHaveCount(0);
});

test("an admin sets a handler's own threshold and cooldown within the bounds", async ({ page }) => {
  await signIn(page, "admin@acme.test");
  await page.goto("/t/acme/breakers");
  const form = page.getByRole("form", { name: "Set a handler's breaker settings" });
  await form.getByLabel("Handler").fill("payments_api");
  await form.getByLabel(/Failures to open/).fill("3");
  await form.getByLabel(/Cooldown, seconds/).fill("120");
  await form.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("table", { name: "Per-handler settings" }).getByRole("row", { name: /payments_api/ })).toContainText("120 s");
});
