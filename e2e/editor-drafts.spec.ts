// Work is not lost when the editor is left while it is still reading the server's copy of the
// draft: the edits made meanwhile are written as the page goes, and come back on return.
import { expect, test } from "@playwright/test";
import { signIn } from "./fixtures.ts";

test("edits made while the server's copy is still being read survive leaving at once", async ({ page }) => {
  await signIn(page, "member@initech.test");
  // The editor's read of the server copy is held until after the page has been left.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route(/sequenceDrafts\.get/, async (route) => {
    await held;
    await route.continue().catch(() => undefined);
  });
  await page.goto("/t/initech/sequences/new");
  await expect(page).toHaveURL(/\/sequences\/new\?draft=[0-9a-f-]{36}$/);
  const name = `hasty-${Date.now()}`;
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByRole("button", { name: "Add step" }).click();

  const saved = page.waitForResponse((r) => r.url().includes("sequenceDrafts.save") && r.ok());
  page.once("dialog", (dialog) => void dialog.accept());
  await page.getByRole("link", { name: "All sequences" }).click();
  await expect(page).toHaveURL(/\/t\/initech\/sequences$/);
  await saved;
  release();
  await page.unroute(/sequenceDrafts\.get/);

  await page.goBack();
  await expect(page.getByText(/^Draft restored from /)).toBeVisible();
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue(name);
  await expect(page.getByRole("list", { name: "Blocks" }).getByRole("button", { name: /^step step_1/ })).toBeVisible();
});
