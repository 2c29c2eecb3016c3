// Tenant settings, credentials: an admin adds one, and its value is never shown again, on the
// page, after a reload, or in any answer the page gets; replacing the value, disabling and
// deleting work from the table; the screenshot of the card is kept.
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { signIn } from "./fixtures.ts";

test("a credential added in settings is listed without its value, which no page or answer shows again", async ({ page }, testInfo) => {
  const secret = `sk-e2e-${randomBytes(10).toString("hex")}`;
  const replaced = `sk-e2e-new-${randomBytes(10).toString("hex")}`;
  const id = `vendor-${randomBytes(3).toString("hex")}`;
  const answers: string[] = [];
  page.on("response", async (response) => {
    if (response.url().includes("/api/")) answers.push(await response.text().catch(() => ""));
  });

  await signIn(page, "admin@globex.test");
  await page.goto("/t/globex/settings");
  const form = page.getByRole("form", { name: "Add a credential" });
  await form.getByLabel("Id").fill(id);
  await form.getByLabel("Name").fill("Vendor API");
  await form.getByLabel("Kind").selectOption("api_key");
  const value = form.getByLabel("Value");
  await expect(value).toHaveAttribute("type", "password");
  await value.fill(JSON.stringify({ token: secret }));
  await form.getByRole("button", { name: "Add credential" }).click();

  const row = page.getByRole("table", { name: "Credentials" }).getByRole("row", { name: new RegExp(id) });
  await expect(row).toContainText("Vendor API");
  await expect(row).toContainText("api_key");
  await expect(row).toContainText("never");
  await expect(value).toHaveValue("");
  await page.getByRole("region", { name: "Credentials" }).screenshot({ path: testInfo.outputPath("credentials-card.png") });

  await page.reload();
  await expect(row).toBeVisible();
  expect(await page.content()).not.toContain(secret);

  await row.getByRole("button", { name: `Replace the value of ${id}` }).click();
  const replace = page.getByRole("form", { name: `Replace the value of ${id}` });
  await replace.getByLabel(/New value/).fill(JSON.stringify({ token: replaced }));
  await replace.getByRole("button", { name: "Replace value" }).click();
  await expect(replace).toHaveCount(0);

  await expect(row).toContainText("enabled");
  await row.getByRole("button", { name: `Disable credential ${id}` }).click();
  await expect(row.getByRole("button", { name: `Enable credential ${id}` })).toBeVisible();
  await page.reload();
  await expect(row).toContainText("disabled");

  await row.getByRole("button", { name: `Delete credential ${id}` }).click();
  await page.getByRole("group", { name: new RegExp(`Confirm: Delete credential ${id}`) }).getByRole("button", { name: "Confirm" }).click();
  await expect(page.getByRole("table", { name: "Credentials" }).getByRole("row", { name: new RegExp(id) })).toHaveCount(0);

  expect(answers.length).toBeGreaterThan(3);
  for (const text of answers) {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(replaced);
  }
});
