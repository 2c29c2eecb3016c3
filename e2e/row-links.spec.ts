// Links do not prefetch whole pages (issue 22, item 3). Next.js prefetches a <Link> as it
// scrolls into view unless prefetch={false}, and each prefetch renders its page on the server:
// a list of 50 instances asked for 50 pages, and the header and tenant tabs for 20 more on every
// load, which the console benchmark saw slowing the page's own data requests to a second. Each
// page opened here shows row links, and makes no prefetch request at all.
import { expect, test, type Page, type Request } from "@playwright/test";
import { DEMO_OPERATOR, signIn } from "./fixtures.ts";

/** Opens `path`, waits until it shows a link matching `rowLink`, and returns the pages it prefetched. */
async function prefetchesOf(page: Page, path: string, rowLink: RegExp): Promise<string[]> {
  const prefetched: string[] = [];
  const onRequest = (request: Request) => {
    if (request.headers()["next-router-prefetch"]) prefetched.push(new URL(request.url()).pathname);
  };
  page.on("request", onRequest);
  try {
    await page.goto(path);
    await expect.poll(async () => (await page.locator("a").evaluateAll((links) => links.map((a) => new URL((a as HTMLAnchorElement).href).pathname)))
      .some((href) => rowLink.test(href)), { message: `${path} shows a row link` }).toBe(true);
    // A viewport prefetch starts soon after the link is drawn; live lists keep a stream open, so
    // the network never idles for long.
    await page.waitForLoadState("networkidle", { timeout: 3_000 }).catch(() => {});
    await page.waitForTimeout(500);
    return prefetched;
  } finally {
    page.off("request", onRequest);
  }
}

test("a tenant's pages prefetch no page, their rows' included", async ({ page }) => {
  await signIn(page, "admin@acme.test");
  const instance = /^\/t\/acme\/instances\/[0-9a-f-]{36}$/;
  const sequence = /^\/t\/acme\/sequences\/[0-9a-f-]{36}$/;
  for (const [path, rowLink] of [["/t/acme", sequence], ["/t/acme/instances", instance], ["/t/acme/sequences", sequence]] as const) {
    expect(await prefetchesOf(page, path, rowLink), path).toEqual([]);
  }
});

test("the operator console's tenants table prefetches no page, its tenants' included", async ({ page }) => {
  await signIn(page, DEMO_OPERATOR);
  expect(await prefetchesOf(page, "/ops", /^\/ops\/tenants\/[a-z0-9][a-z0-9-]+$/)).toEqual([]);
});
