// The console benchmark's browser side: Chromium (Playwright's library API, the system browser
// launched as playwright.config.ts does) opens every page several times, signed in as the
// operator or as a tenant's admin, and records per load each data request's time (each
// /api/trpc/… response, from the request's start to its last byte), the document's time (the same
// way: reads made while the page renders stream in with it) and the time to settle: from
// the navigation's start until no request but the live streams (/api/live/…, open for as long as
// the page is) has been in flight for QUIET_MS, measured to the end of the last one.
import { chromium, type Browser, type BrowserContext, type Page, type Request } from "@playwright/test";

/** How long the network must be quiet for a page to count as settled. */
export const QUIET_MS = 500;
const SETTLE_TIMEOUT_MS = 30_000;

export const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

export interface PageSpec {
  /** As printed: what is open, for whom. */
  name: string;
  /** The address opened, or for an action the page it starts from. */
  path: string;
  /** An interaction measured instead of the load (the load of `path` is not counted). */
  action?: (page: Page) => Promise<void>;
}

export interface DataRequest {
  /** The tRPC procedures of the batch. */
  procedures: string[];
  ms: number;
  url: string;
}

export interface Load {
  settleMs: number;
  /**
   * The document's time, from its request's start to its last byte (null for an interaction): the
   * reads a page makes while it renders (server/web/prefetch.tsx) stream in with it.
   */
  documentMs: number | null;
  requests: DataRequest[];
  /** Requests Next.js's router made to prefetch a page (the next-router-prefetch header). */
  prefetches: number;
}

/** BENCH_CONSOLE_VERBOSE=1: every request of every load, with its time. */
const VERBOSE = process.env.BENCH_CONSOLE_VERBOSE === "1";

const isLiveStream = (url: string) => new URL(url).pathname.startsWith("/api/live/");

function proceduresOf(url: string): string[] {
  const pathname = new URL(url).pathname;
  return decodeURIComponent(pathname.slice(pathname.indexOf("/api/trpc/") + "/api/trpc/".length)).split(",");
}

/**
 * Runs `go` (a navigation or an interaction) and waits until the page settles; returns the time
 * to settle and the tRPC requests that `go` set off.
 */
async function measure(page: Page, go: () => Promise<unknown>): Promise<Load> {
  const inFlight = new Set<Request>();
  const requests: DataRequest[] = [];
  let prefetches = 0;
  let documentMs: number | null = null;
  let lastEnd = 0;
  const onRequest = (request: Request) => {
    if (request.headers()["next-router-prefetch"]) prefetches++;
    if (!isLiveStream(request.url())) inFlight.add(request);
  };
  const onDone = (request: Request) => {
    if (!inFlight.delete(request)) return;
    lastEnd = performance.now();
    const ms = request.timing().responseEnd;
    if (VERBOSE) console.log(`    ${Math.round(lastEnd - started)} ms: ${request.method()} ${request.url().slice(0, 160)} ${Math.round(ms)} ms${request.headers()["next-router-prefetch"] ? " (prefetch)" : ""}`);
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) documentMs = ms;
    if (new URL(request.url()).pathname.startsWith("/api/trpc/")) requests.push({ procedures: proceduresOf(request.url()), ms, url: request.url() });
  };
  const started = performance.now();
  page.on("request", onRequest);
  page.on("requestfinished", onDone);
  page.on("requestfailed", onDone);
  try {
    await go();
    lastEnd = Math.max(lastEnd, performance.now());
    for (;;) {
      if (performance.now() - started > SETTLE_TIMEOUT_MS) throw new Error(`${page.url()} did not settle in ${SETTLE_TIMEOUT_MS} ms (${inFlight.size} in flight)`);
      if (inFlight.size === 0 && performance.now() - lastEnd >= QUIET_MS) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return { settleMs: lastEnd - started, documentMs, requests, prefetches };
  } finally {
    page.off("request", onRequest);
    page.off("requestfinished", onDone);
    page.off("requestfailed", onDone);
  }
}

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
}

/** A browser context signed in as `email` (the sign-in form, as a user does). */
export async function signedIn(browser: Browser, baseURL: string, email: string, password: string): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL, viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/signin"));
  await page.close();
  return context;
}

/**
 * `loads` measured loads of the page (after one that warms the browser's cache and the server's
 * code paths, not counted), each in a new tab. A failed data request fails the benchmark: a page
 * that answers errors fast would otherwise read as a fast page.
 */
export async function measurePage(context: BrowserContext, spec: PageSpec, loads: number): Promise<Load[]> {
  const results: Load[] = [];
  for (let i = 0; i <= loads; i++) {
    const page = await context.newPage();
    const failures: string[] = [];
    page.on("response", (response) => {
      if (response.status() >= 400 && new URL(response.url()).pathname.startsWith("/api/")) failures.push(`${response.status()} ${response.url()}`);
    });
    try {
      let load: Load;
      if (spec.action) {
        await measure(page, () => page.goto(spec.path));
        load = await measure(page, () => spec.action!(page));
      } else {
        load = await measure(page, () => page.goto(spec.path));
      }
      if (failures.length) throw new Error(`${spec.name}: ${failures.join("; ")}`);
      if (i > 0) results.push(load);
    } finally {
      await page.close();
    }
  }
  return results;
}

/**
 * Each procedure of the page's tRPC batches asked alone, `times` times, as the signed-in user
 * (BENCH_CONSOLE_SPLIT=1): which procedure of a slow batch is the slow one. Queries only (GET).
 */
export async function timeProcedures(context: BrowserContext, loads: readonly Load[], times = 3): Promise<Map<string, number[]>> {
  const seen = new Map<string, string>();
  for (const request of loads.flatMap((l) => l.requests)) {
    const url = new URL(request.url);
    const inputs = JSON.parse(url.searchParams.get("input") ?? "{}") as Record<string, unknown>;
    request.procedures.forEach((procedure, i) => {
      if (!seen.has(procedure)) seen.set(procedure, `${url.origin}/api/trpc/${procedure}?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: inputs[i] }))}`);
    });
  }
  const timings = new Map<string, number[]>();
  for (const [procedure, address] of seen) {
    for (let i = 0; i < times; i++) {
      const started = performance.now();
      const response = await context.request.get(address);
      await response.body();
      timings.set(procedure, [...(timings.get(procedure) ?? []), performance.now() - started]);
    }
  }
  return timings;
}
