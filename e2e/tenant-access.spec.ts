// Members see their own tenants and nothing else; a tenant they do not belong to, the operator
// console and a missing page all answer with the same not-found page.
import { expect, test } from "@playwright/test";
import { bulkheadCli, mainText, signIn } from "./fixtures.ts";

const STATES = ["scheduled", "running", "waiting", "paused", "completed", "failed", "cancelled"];

test("a member lands on their tenant and sees only it", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/signin/);
  await signIn(page, "member@acme.test");

  await expect(page).toHaveURL(/\/t\/acme$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Acme Corporation");
  const switcher = page.getByLabel("Tenant", { exact: true });
  await expect(switcher.locator("option")).toHaveText(["Acme Corporation (member)"]);
  await expect(switcher).toHaveValue("acme");
  await expect(page.getByRole("link", { name: "Operator console" })).toHaveCount(0);

  // The overview's data, loaded through tRPC: counts for every state and the demo sequences.
  for (const state of STATES) {
    await expect(page.getByTestId(`count-${state}`).locator(".stat-value")).toHaveText(/^\d[\d,]*$/);
  }
  const sequences = page.locator("section", { has: page.getByRole("heading", { name: "Sequences" }) });
  await expect(sequences.getByRole("cell", { name: "welcome-email", exact: true })).toBeVisible();
  await expect(sequences.getByRole("cell", { name: "nightly-report", exact: true })).toBeVisible();

  // Another tenant's page is indistinguishable from a page that does not exist.
  const globex = await page.goto("/t/globex");
  expect(globex?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Page not found");
  await expect(page.getByText("Globex")).toHaveCount(0);
  const forbidden = await mainText(page);

  const missing = await page.goto("/t/no-such-tenant");
  expect(missing?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Page not found");
  expect(await mainText(page)).toBe(forbidden);
});

test("a member cannot open the operator console", async ({ page }) => {
  await page.goto("/signin");
  await signIn(page, "member@globex.test");
  await expect(page).toHaveURL(/\/t\/globex$/);

  const ops = await page.goto("/ops");
  expect(ops?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Page not found");
  await expect(page.getByRole("table", { name: "Tenants" })).toHaveCount(0);
  const consoleText = await mainText(page);

  const missing = await page.goto("/definitely-missing");
  expect(missing?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Page not found");
  expect(await mainText(page)).toBe(consoleText);
});

test.describe("a user in two tenants", () => {
  const password = "e2e-two-tenants";
  let email = "";

  // A new user each time the hook runs (it runs again in a new worker or with --repeat-each).
  test.beforeAll(async () => {
    email = `two-tenants-${Date.now()}-${test.info().workerIndex}@bulkhead.test`;
    await bulkheadCli("users", "create", email, "--password", password);
    await bulkheadCli("members", "add", "acme", email, "--role", "member");
    await bulkheadCli("members", "add", "globex", email, "--role", "admin");
  });

  test("sees both tenants in the switcher and can switch", async ({ page }) => {
    await page.goto("/signin");
    await signIn(page, email, password);
    await expect(page).toHaveURL(/\/t\/(acme|globex)$/);
    const switcher = page.getByLabel("Tenant", { exact: true });
    await expect(switcher.locator("option")).toHaveText(["Acme Corporation (member)", "Globex (admin)"], {
      useInnerText: true,
    });

    await page.goto("/t/acme");
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Acme Corporation");
    await switcher.selectOption("globex");
    await expect(page).toHaveURL(/\/t\/globex$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Globex");
    await expect(page.getByText("you are an admin")).toBeVisible();
    await expect(switcher).toHaveValue("globex");

    await switcher.selectOption("acme");
    await expect(page).toHaveURL(/\/t\/acme$/);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Acme Corporation");
    await expect(page.getByText("you are a member")).toBeVisible();

    // Still no third tenant.
    expect((await page.goto("/t/initech"))?.status()).toBe(404);
  });
});

test("another tenant's instance and sequence ids show the page a random id shows", async ({ page, request }) => {
  const key = (await bulkheadCli("api-keys", "create", "globex", "--name", "foreign-ids-e2e")).trim().split("\n").at(-1)!;
  const listed = await request.get("/api/v1/instances?limit=1", { headers: { "x-api-key": key } });
  const [theirs] = ((await listed.json()) as { items: { id: string; sequence_id: string }[] }).items;
  expect(theirs).toBeDefined();

  await signIn(page, "admin@acme.test");
  for (const [kind, foreignId] of [["instances", theirs!.id], ["sequences", theirs!.sequence_id]] as const) {
    const random = await page.goto(`/t/acme/${kind}/${crypto.randomUUID()}`);
    expect(random?.status()).toBe(404);
    const missing = await mainText(page);
    const foreign = await page.goto(`/t/acme/${kind}/${foreignId}`);
    expect(foreign?.status()).toBe(404);
    expect(await mainText(page)).toBe(missing);
  }
});
