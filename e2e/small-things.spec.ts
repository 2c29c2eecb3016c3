// Issue 22's small things, as a user meets them in Chromium: an icon on every page (no favicon
// 404), a not-found page titled as one, sequence names on the overview that link to the sequence,
// Run from the sequence list, sign-out in one click, and a throughput chart whose failed line is
// its own count. A tenant of its own, so the overview holds only the runs made here.
import { randomBytes, randomUUID } from "node:crypto";
import { expect, request as http, test, type APIRequestContext, type Page } from "@playwright/test";
import { E2E_PORT } from "./env.ts";
import { bulkheadCli, createTenantKey, createTestUser, DEMO_OPERATOR, signIn } from "./fixtures.ts";

const PASSWORD = "small-things-e2e";
const COMPLETED_RUNS = 4;

let tenant: string;
let email: string;
let api: APIRequestContext;
const sequences = { ok: "", bad: "" };

async function createSequence(name: string, blocks: unknown[]): Promise<string> {
  const id = randomUUID();
  const created = await api.post("/api/v1/sequences", {
    data: { id, tenant_id: tenant, namespace: "default", name, version: 1, created_at: new Date().toISOString(), blocks },
  });
  expect(created.status()).toBe(201);
  return id;
}

async function startInstance(sequenceId: string): Promise<string> {
  const started = await api.post("/api/v1/instances", { data: { sequence_id: sequenceId, tenant_id: tenant, namespace: "default" } });
  expect(started.status()).toBe(201);
  return ((await started.json()) as { id: string }).id;
}

const stateOf = async (id: string) => ((await (await api.get(`/api/v1/instances/${id}`)).json()) as { state: string }).state;

test.beforeAll(async () => {
  tenant = `small-${randomBytes(3).toString("hex")}`;
  await bulkheadCli("tenants", "create", tenant, "--name", "Small Things Co");
  email = await createTestUser(PASSWORD, { tenant, role: "admin" });
  api = await http.newContext({
    baseURL: `http://localhost:${E2E_PORT}`,
    extraHTTPHeaders: { "x-api-key": await createTenantKey(tenant, "small-things"), "content-type": "application/json" },
  });
  sequences.ok = await createSequence("ok-seq", [{ type: "step", id: "done", handler: "noop" }]);
  sequences.bad = await createSequence("bad-seq", [{ type: "step", id: "boom", handler: "fail", params: { message: "forced" } }]);
  const runs = [
    ...(await Promise.all(Array.from({ length: COMPLETED_RUNS }, () => startInstance(sequences.ok)))).map((id) => [id, "completed"] as const),
    [await startInstance(sequences.bad), "failed"] as const,
  ];
  for (const [id, state] of runs) await expect.poll(() => stateOf(id), { timeout: 20_000 }).toBe(state);
});

test.afterAll(async () => {
  await api.dispose();
});

/** Responses of the page that failed (4xx/5xx), as "<status> <path>". */
function failedResponses(page: Page): string[] {
  const failed: string[] = [];
  page.on("response", (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  return failed;
}

test("every page has an icon, and no page asks for one that is missing", async ({ page }) => {
  const failed = failedResponses(page);
  const iconsOf = async () => {
    const hrefs = await page.locator('head link[rel~="icon"]').evaluateAll((links) => links.map((l) => (l as HTMLLinkElement).href));
    expect(hrefs.length).toBeGreaterThan(0);
    for (const href of hrefs) {
      const icon = await page.request.get(href);
      expect(icon.status(), href).toBe(200);
      expect(icon.headers()["content-type"], href).toMatch(/^image\//);
    }
  };

  // Signed out (the icons are not behind sign-in), signed in, and on a not-found page.
  await page.goto("/signin");
  await iconsOf();
  await signIn(page, email, PASSWORD);
  await page.goto(`/t/${tenant}`);
  await iconsOf();
  await page.goto(`/t/${tenant}/no-such-page`);
  await iconsOf();
  // What a browser asks for when a page names no icon.
  const favicon = await page.request.get("/favicon.ico");
  expect(favicon.status()).toBe(200);
  expect(favicon.headers()["content-type"]).toMatch(/^image\//);
  expect(failed.filter((f) => /icon/.test(f))).toEqual([]);
});

test("a not-found page is titled as one, whichever way the page is missing", async ({ page, browser }) => {
  await signIn(page, email, PASSWORD);
  const missing = [
    `/no-such-page`,
    `/t/${tenant}/no-such-page`,
    // A tenant the user is not a member of, and an operator page for a non-operator.
    `/t/acme`,
    `/ops`,
    // Pages whose record is missing.
    `/t/${tenant}/instances/${randomUUID()}`,
    `/t/${tenant}/sequences/${randomUUID()}`,
  ];
  for (const path of missing) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 }), path).toHaveText("Page not found");
    await expect(page, path).toHaveTitle("Not found · Bulkhead");
  }
  // A page that exists keeps its own title.
  await page.goto(`/t/${tenant}`);
  await expect(page).toHaveTitle("Overview · Bulkhead");

  // An operator's page of a tenant that does not exist.
  const operator = await browser.newPage();
  await signIn(operator, DEMO_OPERATOR);
  await operator.goto("/ops/tenants/no-such-tenant");
  await expect(operator.getByRole("heading", { level: 1 })).toHaveText("Page not found");
  await expect(operator).toHaveTitle("Not found · Bulkhead");
  await operator.close();
});

test("sequence names on the overview link to the sequence", async ({ page }) => {
  await signIn(page, email, PASSWORD);
  await page.goto(`/t/${tenant}`);
  const list = page.getByRole("region", { name: "Sequences", exact: true });
  const link = list.getByRole("link", { name: "ok-seq", exact: true });
  await expect(link).toHaveAttribute("href", `/t/${tenant}/sequences/${sequences.ok}`);
  await expect(list.getByRole("link", { name: "bad-seq", exact: true })).toHaveAttribute("href", `/t/${tenant}/sequences/${sequences.bad}`);
  await link.click();
  await expect(page).toHaveURL(`/t/${tenant}/sequences/${sequences.ok}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("ok-seq");
});

test("Run on the sequence list starts an instance of the sequence and opens it", async ({ page }) => {
  await signIn(page, email, PASSWORD);
  await page.goto(`/t/${tenant}/sequences`);
  const runButton = page.getByRole("button", { name: "Run ok-seq" });
  await expect(runButton).toHaveAttribute("aria-expanded", "false");
  await runButton.click();
  await expect(runButton).toHaveAttribute("aria-expanded", "true");
  const form = page.getByRole("region", { name: "Run ok-seq" }).getByRole("form", { name: "Run input" });
  await expect(form).toContainText("Runs the saved version v1.");
  await page.screenshot({ path: test.info().outputPath("sequence-list-run.png"), fullPage: true });
  await form.getByRole("button", { name: "Run", exact: true }).click();

  await expect(page).toHaveURL(new RegExp(`/t/${tenant}/instances/[0-9a-f-]{36}$`));
  const id = page.url().split("/").at(-1)!;
  const instance = (await (await api.get(`/api/v1/instances/${id}`)).json()) as { sequence_id: string };
  expect(instance.sequence_id).toBe(sequences.ok);
  await expect.poll(() => stateOf(id), { timeout: 20_000 }).toBe("completed");
});

test("the throughput chart draws failed as its own count, not stacked on completed", async ({ page }) => {
  await signIn(page, email, PASSWORD);
  await page.goto(`/t/${tenant}`);
  const chart = page.getByRole("img", { name: /^Instances finished per minute/ });
  await expect(chart).toBeVisible();
  // At least the runs made for it (Run on the sequence list may have added one).
  const summary = page.getByTestId("throughput-summary");
  await expect(summary).toContainText(/\d+ completed, 1 failed/);
  expect(Number(/(\d+) completed/.exec((await summary.textContent())!)![1])).toBeGreaterThanOrEqual(COMPLETED_RUNS);
  /** The highest point (smallest y) of a series' line. */
  const peakY = async (stroke: string) => {
    const d = await chart.locator(`path.recharts-area-curve[stroke="${stroke}"]`).getAttribute("d");
    const numbers = (d ?? "").match(/-?\d+(\.\d+)?/g)!.map(Number);
    return Math.min(...numbers.filter((_, index) => index % 2 === 1));
  };
  await chart.screenshot({ path: test.info().outputPath("throughput.png") });
  const completedPeak = await peakY("var(--ok)");
  const failedPeak = await peakY("var(--danger)");
  // 4 (or at least 2, split over two minutes) completed against 1 failed: the red peak lies well below the green one.
  expect(failedPeak - completedPeak).toBeGreaterThan(20);
});

test("sign-out is one click and lands on sign-in, with the session ended", async ({ page }) => {
  await signIn(page, email, PASSWORD);
  await page.goto(`/t/${tenant}`);
  await page.getByRole("banner").getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL("/signin");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Sign in");
  expect((await page.context().cookies()).filter((c) => c.name.includes("session-token"))).toEqual([]);
  await page.goto(`/t/${tenant}`);
  await expect(page).toHaveURL(`/signin?callbackUrl=%2Ft%2F${tenant}`);
});
