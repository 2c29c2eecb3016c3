// Every page at a desktop (1440×900) and a phone (390×844) viewport, as a user who may see it
// (issue 22): once settled, the document is no wider than the window (wide tables scroll inside
// their card, the header and the tabs wrap), the console shows no error, no page error was
// thrown, and no request failed or answered ≥ 400. A full-page screenshot of each is kept as the
// test's artifact, `<page>-<width>.png`. A new page is one row of PAGES.
import { randomBytes } from "node:crypto";
import { expect, test as base, type Browser, type BrowserContextOptions, type Page } from "@playwright/test";
import { DEMO_OPERATOR, signIn } from "./fixtures.ts";

type Role = "operator" | "admin" | "member" | "signedOut";
type StorageState = Exclude<BrowserContextOptions["storageState"], string | undefined>;

/** The demo data's ids the table's paths need, read once per worker through the app's own API. */
interface Demo {
  sequenceId: string;
  instanceId: string;
  invitePath: string;
}

interface PageRow {
  /** The artifact's name: `<name>-<width>.png`. */
  name: string;
  role: Role;
  path: (demo: Demo) => string;
  /** The document's own status, when it is not 200 (the not-found page). */
  status?: number;
}

const TENANT = "acme";
const t = (rest = "") => `/t/${TENANT}${rest}`;

const PAGES: PageRow[] = [
  { name: "signin", role: "signedOut", path: () => "/signin" },
  { name: "invite", role: "signedOut", path: (d) => d.invitePath },
  { name: "signout", role: "member", path: () => "/signout" },
  { name: "not-found", role: "member", path: () => "/no-such-page", status: 404 },
  { name: "account", role: "member", path: () => "/account" },
  { name: "overview", role: "admin", path: () => t() },
  { name: "sequences", role: "admin", path: () => t("/sequences") },
  { name: "sequence-new", role: "admin", path: () => t("/sequences/new") },
  { name: "sequence", role: "admin", path: (d) => t(`/sequences/${d.sequenceId}`) },
  { name: "instances", role: "admin", path: () => t("/instances") },
  { name: "instance", role: "admin", path: (d) => t(`/instances/${d.instanceId}`) },
  { name: "schedules", role: "admin", path: () => t("/schedules") },
  { name: "approvals", role: "admin", path: () => t("/approvals") },
  { name: "workers", role: "admin", path: () => t("/workers") },
  { name: "failed", role: "admin", path: () => t("/failed") },
  { name: "breakers", role: "admin", path: () => t("/breakers") },
  { name: "settings", role: "admin", path: () => t("/settings") },
  { name: "member-overview", role: "member", path: () => t() },
  { name: "ops", role: "operator", path: () => "/ops" },
  { name: "ops-tenant", role: "operator", path: () => `/ops/tenants/${TENANT}` },
  { name: "ops-tenant-new", role: "operator", path: () => "/ops/tenants/new" },
  { name: "ops-moves", role: "operator", path: () => "/ops/moves" },
  { name: "ops-fairness", role: "operator", path: () => "/ops/fairness" },
  { name: "ops-resources", role: "operator", path: () => "/ops/resources" },
  { name: "ops-breakers", role: "operator", path: () => "/ops/breakers" },
  { name: "ops-workers", role: "operator", path: () => "/ops/workers" },
  { name: "ops-audit", role: "operator", path: () => "/ops/audit" },
  { name: "ops-account", role: "operator", path: () => "/account" },
];

const VIEWPORTS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
];

/** Signs `email` in through the form in a context of its own; returns its cookies. */
async function sessionOf(browser: Browser, baseURL: string | undefined, email: string): Promise<StorageState> {
  const context = await browser.newContext({ baseURL });
  await signIn(await context.newPage(), email);
  const state = await context.storageState();
  await context.close();
  return state;
}

/** The demo data's ids for the table's paths, read through the app's own API as the tenant's admin. */
async function demoOf(browser: Browser, baseURL: string | undefined, admin: StorageState): Promise<Demo> {
  const context = await browser.newContext({ baseURL, storageState: admin });
  const query = async (path: string, input: unknown) => {
    const answer = await context.request.get(`/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`);
    expect(answer.status(), path).toBe(200);
    return ((await answer.json()) as { result: { data: unknown } }).result.data;
  };
  const sequences = (await query("sequences.list", { tenantId: TENANT })) as { id: string; name: string }[];
  const instances = (await query("instances.list", { tenantId: TENANT, limit: 1 })) as { items: { id: string }[] };
  // An invitation of its own: its link shows the invitation page until it is used, revoked or expires.
  const invited = await context.request.post("/api/trpc/members.invite", {
    data: { tenantId: TENANT, email: `e2e-viewports-${randomBytes(4).toString("hex")}@example.test`, role: "member" },
  });
  expect(invited.status(), await invited.text()).toBe(200);
  const { link } = ((await invited.json()) as { result: { data: { link: string } } }).result.data;
  await context.close();
  return {
    sequenceId: sequences.find((s) => s.name === "welcome-email")!.id,
    instanceId: instances.items[0]!.id,
    invitePath: new URL(link, "http://x").pathname,
  };
}

interface Setup {
  sessions: Record<Role, StorageState>;
  demo: Demo;
}

const test = base.extend<{ role: Role; demo: Demo }, { setup: Setup }>({
  role: ["signedOut", { option: true }],
  // Once per worker: a session per role (every test then starts signed in) and the demo's ids.
  // A worker's own contexts do not get the config's `use` options, so the base URL is passed on.
  setup: [
    async ({ browser }, use, workerInfo) => {
      const baseURL = workerInfo.project.use.baseURL;
      const [operator, admin, member] = [
        await sessionOf(browser, baseURL, DEMO_OPERATOR),
        await sessionOf(browser, baseURL, `admin@${TENANT}.test`),
        await sessionOf(browser, baseURL, `member@${TENANT}.test`),
      ];
      const demo = await demoOf(browser, baseURL, admin);
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

for (const row of PAGES) {
  for (const viewport of VIEWPORTS) {
    test.describe(() => {
      test.use({ role: row.role, viewport });
      test(`${row.name} at ${viewport.width} px: no overflow, console errors or failed requests`, async ({ page, demo }, testInfo) => {
        const problems = problemsOf(page, row.status ?? 200);
        const response = await page.goto(row.path(demo));
        expect(response?.status()).toBe(row.status ?? 200);
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
