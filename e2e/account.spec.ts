// The account page: a password change and "sign out everywhere" end every session of the user,
// in every browser (a copied cookie included), and the operator's "sign a user out everywhere".
// Each test uses an account of its own, so the demo users' passwords stay as the other specs expect.
import { expect, test, type Browser, type Page } from "@playwright/test";
import { createTestUser, DEMO_OPERATOR, signIn } from "./fixtures.ts";

const PASSWORD = "first password of e2e";
const NEW_PASSWORD = "second password of e2e";

/** A second browser signed in as the user with its own session, and a third holding a copy of `page`'s cookie. */
async function otherBrowsers(browser: Browser, page: Page, email: string, password: string) {
  const second = await (await browser.newContext()).newPage();
  await signIn(second, email, password);
  const copied = (await page.context().cookies()).filter((c) => c.name.includes("session-token"));
  expect(copied).toHaveLength(1);
  const thief = await browser.newContext();
  await thief.addCookies(copied);
  const stolen = await thief.newPage();
  for (const other of [second, stolen]) {
    await other.goto("/account");
    await expect(other.getByRole("heading", { level: 1 })).toHaveText("Account");
  }
  return { second, stolen, close: () => Promise.all([second.context().close(), thief.close()]) };
}

async function expectSignedOut(page: Page) {
  await page.goto("/account");
  await expect(page).toHaveURL("/signin?callbackUrl=%2Faccount");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign in");
  const me = await page.request.get(`/api/trpc/account.me?input=${encodeURIComponent("{}")}`);
  expect(me.status()).toBe(401);
}

test("a password change signs the user out in every browser; the new password signs in and the old one does not", async ({ page, browser }, testInfo) => {
  const email = await createTestUser(PASSWORD);
  await signIn(page, email, PASSWORD);
  await page.getByRole("link", { name: "Account" }).click();
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Account");
  const others = await otherBrowsers(browser, page, email, PASSWORD);

  await test.step("the page, with its sessions counted (the copied cookie is the same session as this one)", async () => {
    await page.reload();
    await expect(page.getByText("You are signed in on 2 browsers or devices, this one included.")).toBeVisible();
    await expect(page.getByText("None yet: a tenant admin can invite you.")).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath("account.png"), fullPage: true });
  });

  const form = page.getByRole("form", { name: "Change password" });
  await test.step("refusals are said under the field, and change nothing", async () => {
    await form.getByLabel("Current password").fill(PASSWORD);
    await form.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
    await form.getByLabel("Confirm new password").fill(`${NEW_PASSWORD}!`);
    await form.getByRole("button", { name: "Change password" }).click();
    await expect(form.getByText("The two new passwords differ.")).toBeVisible();

    await form.getByLabel("Current password").fill("not the password");
    await form.getByLabel("Confirm new password").fill(NEW_PASSWORD);
    await form.getByRole("button", { name: "Change password" }).click();
    await expect(form.getByText("the current password is wrong")).toBeVisible();
    await expect(form.getByLabel("Current password")).toHaveAttribute("aria-invalid", "true");
    await page.screenshot({ path: testInfo.outputPath("account-wrong-password.png"), fullPage: true });
    await others.second.reload();
    await expect(others.second.getByRole("heading", { level: 1 })).toHaveText("Account");
  });

  await test.step("the change sends this browser to sign in, and the others' next page load too", async () => {
    await form.getByLabel("Current password").fill(PASSWORD);
    await form.getByRole("button", { name: "Change password" }).click();
    await expect(page).toHaveURL("/signin?notice=password-changed");
    await expect(page.getByRole("status")).toHaveText("Password changed: sign in with your new password.");
    await page.screenshot({ path: testInfo.outputPath("signin-password-changed.png") });
    await expectSignedOut(others.second);
    await expectSignedOut(others.stolen);
  });

  await test.step("the old password is wrong now; the new one signs in and returns to the page asked for", async () => {
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.locator(".alert-error")).toHaveText("Wrong email or password.");

    await signIn(others.second, email, NEW_PASSWORD);
    await expect(others.second).toHaveURL(/\/account$/);
    await expect(others.second.getByText("You are signed in on this browser only.")).toBeVisible();
    // The copied cookie stays dead: the new session is a new row.
    await expectSignedOut(others.stolen);
  });
  await others.close();
});

test("sign out everywhere ends every session of the user, this browser's included; the password stays", async ({ page, browser }) => {
  const email = await createTestUser(PASSWORD);
  await signIn(page, email, PASSWORD);
  await page.goto("/account");
  const others = await otherBrowsers(browser, page, email, PASSWORD);

  await page.getByRole("button", { name: "Sign out everywhere" }).click();
  await page.getByRole("group", { name: "Confirm: Sign out everywhere" }).getByRole("button", { name: "Confirm" }).click();
  await expect(page).toHaveURL("/signin?notice=signed-out-everywhere");
  await expect(page.getByRole("status")).toHaveText("Signed out everywhere: every session of your account has ended.");
  await expectSignedOut(page);
  await expectSignedOut(others.second);
  await expectSignedOut(others.stolen);

  await signIn(others.second, email, PASSWORD);
  await expect(others.second).toHaveURL(/\/account$/);
  await others.close();
});

test("an operator signs a user out everywhere from the console", async ({ page, browser }, testInfo) => {
  const email = await createTestUser(PASSWORD);
  const user = await (await browser.newContext()).newPage();
  await signIn(user, email, PASSWORD);
  await user.goto("/account");
  await expect(user.getByRole("heading", { level: 1 })).toHaveText("Account");

  await signIn(page, DEMO_OPERATOR);
  await page.goto("/ops");
  const card = page.getByRole("region", { name: "Sign a user out everywhere" });
  const field = card.getByLabel("User email");

  await field.fill("nobody-at-all@example.test");
  await card.getByRole("button", { name: "Sign out everywhere" }).click();
  await expect(card.getByRole("alert")).toHaveText("Could not sign the user out: user not found");

  await field.fill(email.toUpperCase());
  await card.getByRole("button", { name: "Sign out everywhere" }).click();
  await expect(card.getByRole("status")).toHaveText(`Signed ${email} out everywhere: 1 session ended.`);
  await expect(card.getByRole("alert")).toHaveCount(0);
  await card.screenshot({ path: testInfo.outputPath("ops-sign-out-user.png") });
  await expectSignedOut(user);

  // The operator is still signed in, and the audit log has it.
  await page.goto("/ops/audit");
  await expect(page.getByText("user.sessions.end").first()).toBeVisible();
  await user.context().close();
});
