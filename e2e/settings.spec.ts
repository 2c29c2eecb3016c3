// Tenant settings: an admin creates an API key (its secret shown once), uses it against REST v1,
// revokes it, and the next call is refused; members cannot open the settings at all.
import { expect, test } from "@playwright/test";
import { mainText, signIn } from "./fixtures.ts";

test("an API key made in settings works against REST v1 until it is revoked", async ({ page, request }) => {
  await signIn(page, "admin@globex.test");
  await page.goto("/t/globex/settings");
  const name = `e2e-${Date.now()}`;
  await page.getByLabel("Key name").fill(name);
  await page.getByRole("button", { name: "Create key" }).click();
  const secretBox = page.getByLabel("New API key secret", { exact: true });
  await expect(secretBox).toHaveValue(/^bh_/);
  const secret = await secretBox.inputValue();

  const before = await request.get("/api/v1/instances", { headers: { "x-api-key": secret } });
  expect(before.status()).toBe(200);

  // The secret is shown once: after leaving it, the page never shows it again.
  await page.getByRole("button", { name: "Done" }).first().click();
  await expect(page.getByLabel("New API key secret", { exact: true })).toHaveCount(0);
  await expect(page.getByRole("table", { name: "API keys" })).not.toContainText(secret);

  await page.getByRole("button", { name: new RegExp(`^Revoke key ${name}`) }).click();
  await page.getByRole("group", { name: new RegExp(`Confirm: Revoke key ${name}`) }).getByRole("button", { name: "Confirm" }).click();
  await expect(page.getByRole("table", { name: "API keys" }).getByRole("row", { name: new RegExp(name) })).toContainText(/revoked/i);

  const after = await request.get("/api/v1/instances", { headers: { "x-api-key": secret } });
  expect(after.status()).toBe(401);
});

test("a member cannot open the settings pages: the ordinary not-found page", async ({ page }) => {
  await signIn(page, "member@globex.test");
  const settings = await page.goto("/t/globex/settings");
  expect(settings?.status()).toBe(404);
  const refused = await mainText(page);
  const missing = await page.goto("/t/globex/no-such-page");
  expect(missing?.status()).toBe(404);
  expect(await mainText(page)).toBe(refused);
  await page.goto("/t/globex");
  await expect(page.getByRole("link", { name: "Settings", exact: true })).toHaveCount(0);
});
