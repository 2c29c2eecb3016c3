// Sign-in, the return to the page asked for, and sign-out.
import { expect, test } from "@playwright/test";
import { DEMO_PASSWORD, signIn } from "./fixtures.ts";

test("a wrong password shows an error and keeps the email", async ({ page }) => {
  // One failure on an account no other test signs in with: far from the per-account (5) and
  // per-address (20) limits, and the successful sign-in at the end clears the account's count.
  const email = "admin@initech.test";
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Sign in" }).click();

  await expect(page.locator(".alert-error")).toHaveText("Wrong email or password.");
  await expect(page).toHaveURL(/\/signin$/);
  await expect(page.getByLabel("Email")).toHaveValue(email);
  await expect(page.getByLabel("Password")).toHaveValue("");

  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/t\/initech$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Initech");
});

test("signing in returns to the page asked for", async ({ page }) => {
  await page.goto("/t/acme");
  await expect(page).toHaveURL("/signin?callbackUrl=%2Ft%2Facme");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign in");

  await signIn(page, "admin@acme.test");
  await expect(page).toHaveURL(/\/t\/acme$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Acme Corporation");
  await expect(page.getByText("you are an admin")).toBeVisible();
});

test("after signing out, tenant pages need a sign-in again", async ({ page }) => {
  await page.goto("/signin");
  await signIn(page, "admin@globex.test");
  await expect(page).toHaveURL(/\/t\/globex$/);

  // One click in the header: no confirmation page.
  await page.getByRole("banner").getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin$/);

  await page.goto("/t/acme");
  await expect(page).toHaveURL("/signin?callbackUrl=%2Ft%2Facme");
  const cookies = await page.context().cookies();
  expect(cookies.filter((c) => c.name.includes("session-token"))).toEqual([]);
});

test("a session token copied before sign-out is dead after it, for pages and for the API", async ({ page, browser }) => {
  await page.goto("/signin");
  await signIn(page, "member@globex.test");
  await expect(page).toHaveURL(/\/t\/globex$/);
  const copied = (await page.context().cookies()).filter((c) => c.name.includes("session-token"));
  expect(copied).toHaveLength(1);

  // The copy works while the session lives.
  const thief = await browser.newContext();
  await thief.addCookies(copied);
  const stolen = await thief.newPage();
  await stolen.goto("/t/globex");
  await expect(stolen.getByRole("heading", { level: 1 })).toHaveText("Globex");
  const me = () => stolen.request.get(`/api/trpc/account.me?input=${encodeURIComponent("{}")}`);
  expect((await me()).status()).toBe(200);

  await page.goto("/signout");
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin$/);

  // Within one request the copy is as good as no cookie: sign-in for pages, UNAUTHORIZED for tRPC.
  await stolen.goto("/t/globex");
  await expect(stolen).toHaveURL("/signin?callbackUrl=%2Ft%2Fglobex");
  await expect(stolen.getByRole("heading", { level: 1 })).toHaveText("Sign in");
  expect((await me()).status()).toBe(401);
  await thief.close();
});

test("next-auth's own sign-out endpoint ends the session too: a copied token is dead after it", async ({ page, browser }) => {
  await page.goto("/signin");
  await signIn(page, "member@globex.test");
  await expect(page).toHaveURL(/\/t\/globex$/);
  const copied = (await page.context().cookies()).filter((c) => c.name.includes("session-token"));
  const thief = await browser.newContext();
  await thief.addCookies(copied);
  const me = () => thief.request.get(`/api/trpc/account.me?input=${encodeURIComponent("{}")}`);
  expect((await me()).status()).toBe(200);

  // The door the app's Sign out does not use, posted as next-auth's client would.
  const { csrfToken } = await (await page.request.get("/api/auth/csrf")).json();
  const signedOut = await page.request.post("/api/auth/signout", {
    form: { csrfToken, callbackUrl: "/signin" }, headers: { "x-auth-return-redirect": "1" },
  });
  expect(signedOut.status()).toBe(200);
  expect((await me()).status()).toBe(401);
  // next-auth's session endpoint reads only the token: it too answers "no session" now.
  expect(await (await thief.request.get("/api/auth/session")).json()).toBeNull();
  await thief.close();
});
