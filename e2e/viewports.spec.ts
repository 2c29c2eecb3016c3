// Every page at a desktop (1440×900) and a phone (390×844) viewport, as a user who may see it
// (issue 22): once settled, the document is no wider than the window (wide tables scroll inside
// their card, the header and the tabs wrap), the console shows no error, no page error was
// thrown, and no request failed or answered ≥ 400. A full-page screenshot of each is kept as the
// test's artifact, `<page>-<width>.png`. A new page is one row of PAGES. Tenant pages are those of
// a tenant each worker makes with rows in every table (runs failed and waiting, a schedule, an
// open breaker, an invitation), so the widths measured are those of pages in use. And a page whose
// views get their first data with it is loaded once with every tRPC request held unanswered.
import { randomBytes, randomUUID } from "node:crypto";
import { expect, test as base, type Browser, type BrowserContextOptions, type Page } from "@playwright/test";
import pg from "pg";
import { E2E_SERVER_ENV } from "./env.ts";
import { DEMO_OPERATOR, signIn } from "./fixtures.ts";

type Role = "operator" | "admin" | "member" | "signedOut";
type StorageState = Exclude<BrowserContextOptions["storageState"], string | undefined>;

/**
 * A tenant of the worker's own with something on every page (so a page is measured with rows in
 * its tables, not only its empty state), and the ids the table's paths need.
 */
interface Demo {
  tenant: string;
  sequenceId: string;
  failedInstanceId: string;
  invitePath: string;
}

interface PageRow {
  /** The artifact's name: `<name>-<width>.png`. */
  name: string;
  role: Role;
  path: (demo: Demo) => string;
  /** The document's own status, when it is not 200 (the not-found page). */
  status?: number;
  /** Its views' first data comes with the page (server/web/prefetch.tsx), so none is left loading without a tRPC answer. */
  firstData?: true;
}

const t = (demo: Demo, rest = "") => `/t/${demo.tenant}${rest}`;

const PAGES: PageRow[] = [
  { name: "signin", role: "signedOut", path: () => "/signin" },
  { name: "invite", role: "signedOut", path: (d) => d.invitePath },
  { name: "signout", role: "member", path: () => "/signout" },
  { name: "not-found", role: "member", path: () => "/no-such-page", status: 404 },
  { name: "account", role: "member", path: () => "/account", firstData: true },
  { name: "member-overview", role: "member", path: () => "/t/acme", firstData: true },
  { name: "overview", role: "admin", path: (d) => t(d), firstData: true },
  { name: "sequences", role: "admin", path: (d) => t(d, "/sequences"), firstData: true },
  { name: "sequence-new", role: "admin", path: (d) => t(d, "/sequences/new"), firstData: true },
  { name: "sequence", role: "admin", path: (d) => t(d, `/sequences/${d.sequenceId}`), firstData: true },
  { name: "instances", role: "admin", path: (d) => t(d, "/instances"), firstData: true },
  { name: "instance", role: "admin", path: (d) => t(d, `/instances/${d.failedInstanceId}`), firstData: true },
  { name: "schedules", role: "admin", path: (d) => t(d, "/schedules"), firstData: true },
  { name: "approvals", role: "admin", path: (d) => t(d, "/approvals"), firstData: true },
  { name: "workers", role: "admin", path: (d) => t(d, "/workers"), firstData: true },
  { name: "failed", role: "admin", path: (d) => t(d, "/failed"), firstData: true },
  { name: "breakers", role: "admin", path: (d) => t(d, "/breakers"), firstData: true },
  { name: "settings", role: "admin", path: (d) => t(d, "/settings"), firstData: true },
  { name: "ops", role: "operator", path: () => "/ops", firstData: true },
  { name: "ops-tenant", role: "operator", path: (d) => `/ops/tenants/${d.tenant}`, firstData: true },
  { name: "ops-tenant-new", role: "operator", path: () => "/ops/tenants/new", firstData: true },
  { name: "ops-moves", role: "operator", path: () => "/ops/moves", firstData: true },
  { name: "ops-fairness", role: "operator", path: () => "/ops/fairness", firstData: true },
  { name: "ops-resources", role: "operator", path: () => "/ops/resources", firstData: true },
  { name: "ops-breakers", role: "operator", path: () => "/ops/breakers", firstData: true },
  { name: "ops-workers", role: "operator", path: () => "/ops/workers", firstData: true },
  { name: "ops-audit", role: "operator", path: () => "/ops/audit" },
  { name: "ops-account", role: "operator", path: () => "/account", firstData: true },
];

const VIEWPORTS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
];

/** Signs `email` in through the form in a context of its own; returns its cookies. */
async function sessionOf(browser: Browser, baseURL: string | undefined, email: string, password?: string): Promise<StorageState> {
  const context = await browser.newContext({ baseURL });
  await signIn(await context.newPage(), email, password);
  const state = await context.storageState();
  await context.close();
  return state;
}

/** tRPC over HTTP as the session `state` signs in: a query (GET) or a mutation (POST), its data. */
async function trpcAs(browser: Browser, baseURL: string | undefined, state: StorageState) {
  const context = await browser.newContext({ baseURL, storageState: state });
  const dataOf = async (answer: Awaited<ReturnType<typeof context.request.get>>, path: string) => {
    expect(answer.status(), `${path}: ${await answer.text()}`).toBe(200);
    return ((await answer.json()) as { result: { data: unknown } }).result.data;
  };
  return {
    query: async (path: string, input: unknown) =>
      dataOf(await context.request.get(`/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`), path),
    mutate: async (path: string, input: unknown) => dataOf(await context.request.post(`/api/trpc/${path}`, { data: input }), path),
    close: () => context.close(),
  };
}

/** Opens a breaker of the tenant (placed on the primary backend) as five failures in a row would. */
async function openBreaker(tenant: string, handler: string) {
  const client = new pg.Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${E2E_SERVER_ENV.BULKHEAD_PG_PORT}/bulkhead` });
  await client.connect();
  try {
    await client.query(`INSERT INTO circuit_breakers (tenant_id, handler, failure_count, opened_at) VALUES ($1, $2, 5, now())`, [tenant, handler]);
  } finally {
    await client.end();
  }
}

/**
 * The worker's tenant, made through the operator console's API with a new admin: sequences (one
 * that fails with a long error, one waiting for an approval), runs of them, a schedule, an open
 * breaker and an invitation. Returns the admin's session and the ids.
 */
async function demoOf(browser: Browser, baseURL: string | undefined, operator: StorageState): Promise<{ admin: StorageState; demo: Demo }> {
  const hex = randomBytes(3).toString("hex");
  const tenant = `vp-${hex}`;
  const ops = await trpcAs(browser, baseURL, operator);
  const created = (await ops.mutate("ops.createTenant", { slug: tenant, name: `Viewports ${hex} Incorporated`, adminEmail: `e2e-vp-${hex}@example.test` })) as {
    adminEmail: string;
    oneTimePassword: string;
  };
  await ops.close();
  const admin = await sessionOf(browser, baseURL, created.adminEmail, created.oneTimePassword);
  const api = await trpcAs(browser, baseURL, admin);
  const sequence = async (name: string, blocks: unknown[]) =>
    ((await api.mutate("sequences.create", {
      tenantId: tenant,
      sequence: { id: randomUUID(), tenant_id: tenant, namespace: "default", name, version: 1, created_at: new Date().toISOString(), blocks },
    })) as { id: string }).id;
  const run = async (sequenceId: string) => ((await api.mutate("sequences.run", { tenantId: tenant, sequenceId })) as { instanceId: string }).instanceId;

  const ok = await sequence("nightly-billing-reconciliation-report", [
    { type: "step", id: "collect", handler: "noop" },
    { type: "step", id: "summarise", handler: "log", params: { message: "report ready" } },
  ]);
  const failing = await sequence("charge-card", [
    { type: "step", id: "charge", handler: "fail", params: { message: "card processor answered 502 Bad Gateway: upstream connect error or disconnect/reset before headers" } },
  ]);
  const review = await sequence("ship-order", [
    { type: "step", id: "approve", handler: "log", params: { message: "approved" }, wait_for_input: {
      prompt: "Ship order A-102 to the customer?", choices: [{ label: "Ship", value: "ship" }, { label: "Hold", value: "hold" }], allow_comment: true,
    } },
  ]);
  await run(ok);
  const failedInstanceId = await run(failing);
  await run(failing);
  await run(review);
  await api.mutate("schedules.create", { tenantId: tenant, sequenceId: ok, cronExpr: "0 * * * *" });
  await openBreaker(tenant, "billing_api");
  // An invitation: its link shows the invitation page until it is used, revoked or expires.
  const { link } = (await api.mutate("members.invite", { tenantId: tenant, email: `e2e-vp-invited-${hex}@example.test`, role: "member" })) as { link: string };
  // The engine has run them: two failed, one waiting for its answer.
  await expect
    .poll(async () => {
      const { items } = (await api.query("instances.list", { tenantId: tenant, states: ["failed", "waiting"] })) as { items: unknown[] };
      return items.length;
    }, { timeout: 20_000 })
    .toBe(3);
  await api.close();
  return { admin, demo: { tenant, sequenceId: ok, failedInstanceId, invitePath: new URL(link, "http://x").pathname } };
}

interface Setup {
  sessions: Record<Role, StorageState>;
  demo: Demo;
}

const test = base.extend<{ role: Role; demo: Demo }, { setup: Setup }>({
  role: ["signedOut", { option: true }],
  // Once per worker: a session per role (every test then starts signed in) and the tenant.
  // A worker's own contexts do not get the config's `use` options, so the base URL is passed on.
  setup: [
    async ({ browser }, use, workerInfo) => {
      const baseURL = workerInfo.project.use.baseURL;
      const operator = await sessionOf(browser, baseURL, DEMO_OPERATOR);
      const member = await sessionOf(browser, baseURL, "member@acme.test");
      const { admin, demo } = await demoOf(browser, baseURL, operator);
      await use({ sessions: { operator, admin, member, signedOut: { cookies: [], origins: [] } }, demo });
    },
    { scope: "worker", timeout: 60_000 },
  ],
  storageState: async ({ role, setup }, use) => use(setup.sessions[role]),
  demo: async ({ setup }, use) => use(setup.demo),
});

/** Everything that went wrong while the page loaded: console errors, page errors, failed requests. */
function problemsOf(page: Page, expectedStatus: number): string[] {
  const problems: string[] = [];
  page.on("console", (message) => {
    // Chromium logs a document answered ≥ 400 as a failed load: expected of the not-found page.
    const ofDocument = expectedStatus !== 200 && message.location().url === page.url() && message.text().includes(`status of ${expectedStatus} `);
    if (message.type() === "error" && !ofDocument) problems.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("requestfailed", (request) => {
    // Next.js reads a dynamic page's prefetch only up to its loading boundary, then cancels the
    // rest of the body (segment-cache bufferPrefetchResponseBody): that is no failure.
    const cancelledPrefetch = request.headers()["next-router-prefetch"] !== undefined && request.failure()?.errorText === "net::ERR_ABORTED";
    if (!cancelledPrefetch) problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`);
  });
  page.on("response", (response) => {
    const expected = response.request().isNavigationRequest() && response.request().frame() === page.mainFrame() ? expectedStatus : 200;
    if (response.status() >= 400 && response.status() !== expected) problems.push(`${response.status()}: ${response.url()}`);
  });
  return problems;
}

/**
 * The document's width, and for the failure message what sticks out past the window's right edge:
 * the outermost such elements and the innermost (an absolutely placed one escapes a scrolling
 * wrapper that is not its containing block).
 */
function overflowOf(page: Page) {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const describe = (el: Element) =>
      `${el.tagName.toLowerCase()}${[...el.classList].map((c) => `.${c}`).join("")} → ${Math.round(el.getBoundingClientRect().right)}px`;
    const sticking = new Set([...document.body.querySelectorAll("*")].filter((el) => el.getBoundingClientRect().right > width + 0.5));
    const all = [...sticking];
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: width,
      outermost: all.filter((el) => !sticking.has(el.parentElement!)).slice(0, 6).map(describe),
      innermost: all.filter((el) => ![...el.children].some((child) => sticking.has(child))).slice(0, 6).map(describe),
    };
  });
}

test.describe.configure({ mode: "parallel" });

for (const row of PAGES.filter((r) => r.firstData)) {
  test.describe(() => {
    // A reader far from the server's zone and locale: what the server draws must still be what
    // hydration draws (times say UTC until then, app/_components/local-time.tsx).
    test.use({ role: row.role, viewport: VIEWPORTS[0], timezoneId: "Asia/Kolkata", locale: "de-DE" });
    // Read while the page renders, its data is in the HTML: a view that had to ask for it would
    // wait for ever here, loading.
    test(`${row.name} comes with its data: with every tRPC request held, nothing is left loading`, async ({ page, demo }) => {
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.route("**/api/trpc/**", () => {});
      await page.goto(row.path(demo));
      await expect(page.locator("main h1").first()).toBeVisible();
      await expect(page.locator('main .skeleton, main [aria-busy="true"]')).toHaveCount(0);
      // The server rendered the views with their data too: hydration found what it drew.
      expect(errors).toEqual([]);
    });
  });
}

for (const row of PAGES) {
  for (const viewport of VIEWPORTS) {
    test.describe(() => {
      test.use({ role: row.role, viewport });
      test(`${row.name} at ${viewport.width} px: no overflow, console errors or failed requests`, async ({ page, demo }, testInfo) => {
        const problems = problemsOf(page, row.status ?? 200);
        const path = row.path(demo);
        const response = await page.goto(path);
        expect(response?.status()).toBe(row.status ?? 200);
        // The page itself, not the sign-in page a lost session would have been sent to.
        expect(new URL(page.url()).pathname).toBe(path);
        await page.waitForLoadState("networkidle");
        await expect(page.locator("main h1").first()).toBeVisible();
        // Settled: no loading placeholder is left.
        await expect(page.locator(".skeleton")).toHaveCount(0);

        await page.screenshot({ path: testInfo.outputPath(`${row.name}-${viewport.width}.png`), fullPage: true });
        const overflow = await overflowOf(page);
        testInfo.annotations.push({ type: "document width", description: String(overflow.scrollWidth) });
        expect(overflow.scrollWidth, JSON.stringify(overflow, null, 1)).toBeLessThanOrEqual(overflow.innerWidth);
        expect(problems).toEqual([]);
      });
    });
  }
}
