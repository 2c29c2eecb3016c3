// Invitations: an admin invites by email in the settings page and passes the link on; the invitee
// opens it in a browser of their own and joins, by choosing a password (someone new) or by signing
// in (an account of another tenant). Inviting looks the same for both. A revoked link shows the
// one invalid page, the same as a link that never existed.
import { randomBytes } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { bulkheadCli, mainText, signIn } from "./fixtures.ts";

const newEmail = () => `e2e-${randomBytes(4).toString("hex")}@example.test`;

/** Invites `email` from the settings page the admin is on; returns the link shown once, and the box's words. */
async function invite(page: Page, email: string, role: "member" | "admin" = "member") {
  const form = page.getByRole("form", { name: "Invite a member" });
  await form.getByLabel("Email").fill(email);
  await form.getByLabel("Role").selectOption(role);
  await form.getByRole("button", { name: "Invite" }).click();
  const box = page.getByRole("region", { name: `Invitation for ${email}` });
  const value = box.getByLabel("Invitation link", { exact: true });
  await expect(value).toHaveValue(/\/invite\/[A-Za-z0-9_-]{43}$/);
  const link = await value.inputValue();
  expect(new URL(link).origin).toBe(new URL(page.url()).origin);
  return { link, words: (await box.innerText()).replaceAll(email, "<email>"), box };
}

const membersTable = (page: Page) => page.getByRole("table", { name: "Members" });

test("an admin invites someone new, who opens the link signed out, chooses a password and lands in the tenant", async ({ page, browser }, testInfo) => {
  await signIn(page, "admin@globex.test");
  await page.goto("/t/globex/settings");
  const email = newEmail();
  const { link, box } = await invite(page, email, "admin");
  await expect(box).toContainText(`Send this link to ${email}`);
  const row = membersTable(page).getByRole("row", { name: new RegExp(email) });
  await expect(row).toContainText("invited");
  await expect(row).toContainText("admin");
  await expect(row).toContainText(/expires/);
  // The settings panel with the link box and the invited row, kept as an artifact.
  await page.locator("section", { has: page.getByRole("heading", { name: "Members", exact: true }) }).screenshot({
    path: testInfo.outputPath("settings-invited-row.png"),
  });
  await page.screenshot({ path: testInfo.outputPath("settings-page.png"), fullPage: true });

  const invitee = await browser.newContext();
  const theirs = await invitee.newPage();
  await theirs.goto(link);
  await expect(theirs.getByRole("heading", { level: 1 })).toHaveText("Join Globex");
  const text = await mainText(theirs);
  expect(text).toContain("You are invited to join Globex as an admin.");
  expect(text).toContain(email);
  await expect(theirs.getByRole("link", { name: "Sign in to accept" })).toHaveAttribute(
    "href", `/signin?callbackUrl=${encodeURIComponent(new URL(link).pathname)}`,
  );
  await theirs.screenshot({ path: testInfo.outputPath("invitation-signed-out.png"), fullPage: true });

  const form = theirs.getByRole("form", { name: "Choose a password and accept" });
  await form.getByLabel("Choose a password").fill("invited and new 1");
  await form.getByRole("button", { name: "Create account and accept" }).click();
  await expect(theirs).toHaveURL(/\/t\/globex$/);
  await expect(theirs.getByRole("heading", { level: 1 })).toHaveText("Globex");
  await expect(theirs.locator("#tenant-switcher")).toContainText("Globex (admin)");

  // Used: the link is dead now, and the admin sees a member instead of an invitation.
  await theirs.goto(link);
  await expect(theirs.getByRole("heading", { level: 1 })).toHaveText("Invitation not valid");
  await invitee.close();
  await page.reload();
  await expect(row).toContainText("joined");
  await expect(row).not.toContainText("invited");
});

test("an existing user of another tenant is invited with the same answer, signs in, accepts and sees the tenant", async ({ page, browser }) => {
  const password = "elsewhere pass 1";
  const existing = newEmail();
  await bulkheadCli("users", "create", existing, "--password", password);
  await bulkheadCli("members", "add", "initech", existing, "--role", "member");

  await signIn(page, "admin@globex.test");
  await page.goto("/t/globex/settings");
  const unknown = await invite(page, newEmail());
  await unknown.box.getByRole("button", { name: "Done" }).click();
  const known = await invite(page, existing);
  // What the admin is shown does not tell the two apart.
  expect(known.words).toBe(unknown.words);
  await expect(membersTable(page).getByRole("row", { name: new RegExp(existing) })).toContainText("invited");

  // Signed in as someone else (the admin): the invitation names its address and offers sign-out.
  await page.goto(known.link);
  await expect(page.getByRole("main").getByRole("alert")).toContainText(`This invitation is for ${existing}. You are signed in as admin@globex.test`);
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Accept" })).toHaveCount(0);

  const invitee = await browser.newContext();
  const theirs = await invitee.newPage();
  await theirs.goto(known.link);
  await theirs.getByRole("link", { name: "Sign in to accept" }).click();
  await expect(theirs).toHaveURL(/\/signin\?callbackUrl=/);
  await signIn(theirs, existing, password);
  await expect(theirs).toHaveURL(new URL(known.link).pathname);
  await expect(theirs.getByRole("heading", { level: 1 })).toHaveText("Join Globex");
  await theirs.getByRole("button", { name: "Accept" }).click();
  await expect(theirs).toHaveURL(/\/t\/globex$/);
  const switcher = theirs.locator("#tenant-switcher");
  await expect(switcher).toContainText("Globex (member)");
  await expect(switcher).toContainText("Initech (member)");
  await invitee.close();
});

test("a revoked link shows the invalid page, the same as one that never existed", async ({ page, browser }) => {
  await signIn(page, "admin@globex.test");
  await page.goto("/t/globex/settings");
  const email = newEmail();
  const { link } = await invite(page, email);
  await page.getByRole("button", { name: `Revoke the invitation of ${email}` }).click();
  await page.getByRole("group", { name: `Confirm: Revoke the invitation of ${email}` }).getByRole("button", { name: "Confirm" }).click();
  await expect(membersTable(page).getByRole("row", { name: new RegExp(email) })).toHaveCount(0);

  const visitor = await browser.newContext();
  const theirs = await visitor.newPage();
  await theirs.goto(link);
  await expect(theirs.getByRole("heading", { level: 1 })).toHaveText("Invitation not valid");
  const revoked = await mainText(theirs);
  expect(revoked).toContain("This invitation is not valid (expired, revoked or already used)");
  await expect(theirs.getByRole("button", { name: "Create account and accept" })).toHaveCount(0);
  for (const other of [`/invite/${randomBytes(32).toString("base64url")}`, "/invite/not-a-token"]) {
    await theirs.goto(other);
    expect(await mainText(theirs), other).toBe(revoked);
  }
  // Signed in makes no difference to it either.
  await page.goto(link);
  expect(await mainText(page)).toBe(revoked);
  await visitor.close();
});
