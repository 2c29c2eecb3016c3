// The platform operator's console lists the tenants, a page at a time, with their storage placement.
import { expect, test } from "@playwright/test";
import { DEMO_OPERATOR, DEMO_TENANTS, signIn } from "./fixtures.ts";

test("the operator lands on the console and sees every tenant", async ({ page }) => {
  await page.goto("/signin");
  await signIn(page, DEMO_OPERATOR);

  await expect(page).toHaveURL(/\/ops$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Operator console");
  await expect(page.getByRole("link", { name: "Operator console" })).toBeVisible();
  // The operator belongs to no tenant, so there is no switcher.
  await expect(page.locator("#tenant-switcher")).toHaveCount(0);

  // The first page, by name: the demo tenants sort before any other spec's.
  const table = page.getByRole("table", { name: "Tenants" });
  await expect(table).toBeVisible();
  for (const tenant of DEMO_TENANTS) {
    const row = table.locator(`tr[data-tenant="${tenant.slug}"]`);
    await expect(row).toHaveCount(1);
    const cells = row.getByRole("cell");
    await expect(cells.nth(0).getByRole("link")).toHaveText(tenant.name);
    await expect(cells.nth(0).locator("code")).toHaveText(tenant.slug);
    await expect(cells.nth(1).locator(".badge").first()).toHaveText("backend" in tenant ? tenant.backend : "primary");
    await expect(cells.nth(1)).toContainText("epoch 1");
  }
});
