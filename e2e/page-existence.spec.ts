// Which pages exist is told to no one who may not open them. Fetched raw (no browser rendering,
// no redirects followed): a forbidden page's HTML equals a missing page's once the requested path
// is swapped for a placeholder, and a signed-out visitor gets a bare redirect to sign-in for any
// path, existing or not, with nothing of the page asked for.
import { expect, test, type APIRequestContext } from "@playwright/test";
import { signIn } from "./fixtures.ts";

/** Headers that differ between any two responses (time, size of a body naming the path, connection). */
const VOLATILE = new Set(["date", "content-length", "connection", "keep-alive", "transfer-encoding"]);

/**
 * The HTML and headers of a GET of `path` (with `rsc`, the router's own request of it), the path
 * (raw and percent-encoded) replaced by a placeholder.
 */
async function documentOf(request: APIRequestContext, path: string, rsc = false) {
  const response = await request.get(path, { maxRedirects: 0, headers: rsc ? { rsc: "1" } : {} });
  const html = (await response.text()).replaceAll(path, "<path>").replaceAll(encodeURIComponent(path), "<path>");
  const segments = path.split("/").filter(Boolean);
  // The router state names the path's segments one by one as well.
  const normalized = segments.reduce((text, segment) => text.replaceAll(`"${segment}"`, '"<segment>"'), html);
  const headers = Object.entries(response.headers()).filter(([name]) => !VOLATILE.has(name)).sort();
  return { status: response.status(), headers, html: normalized };
}

const MISSING = ["/no-such-page", "/t/no-such-tenant", "/ops-not-a-page"];

test("a member's forbidden pages are the same document as a missing page", async ({ page }) => {
  await signIn(page, "member@acme.test");
  const missing = await documentOf(page.request, "/no-such-page");
  expect(missing.status).toBe(404);
  expect(missing.html).toContain("Page not found");
  // Headers too: a refused page once carried x-middleware-rewrite where a missing one did not.
  const missingRsc = await documentOf(page.request, "/no-such-page", true);
  for (const path of [...MISSING, "/t/acme/settingz", "/t/acme/instances/a/b", "/ops", "/ops/fairness", "/ops/fairness/acme", "/ops/tenants/acme", "/t/globex", "/t/globex/settings", "/t/acme/settings"]) {
    const forbidden = await documentOf(page.request, path);
    expect({ path, ...forbidden }).toEqual({ path, ...missing });
    expect({ path, headers: (await documentOf(page.request, path, true)).headers }).toEqual({ path, headers: missingRsc.headers });
  }
  for (const word of ["Tenants", "Backends", "Operator console", "Globex", "API keys", "Members"]) expect(missing.html).not.toContain(word);
  // The member's own pages still open, and set no cookie: a page answered after a sign-out must
  // not bring the session cookie back.
  const own = await page.request.get("/t/acme", { maxRedirects: 0 });
  expect(own.status()).toBe(200);
  expect(own.headers()["set-cookie"]).toBeUndefined();
});

test("an admin's forbidden pages are the same document as a missing page", async ({ page }) => {
  await signIn(page, "admin@acme.test");
  const missing = await documentOf(page.request, "/no-such-page");
  for (const path of ["/ops", "/ops/audit", "/t/globex/settings"]) {
    expect({ path, ...(await documentOf(page.request, path)) }).toEqual({ path, ...missing });
  }
  expect((await page.request.get("/t/acme/settings", { maxRedirects: 0 })).status()).toBe(200);
});

test("a signed-out visitor is redirected to sign-in with nothing of the page, for pages that exist and pages that do not", async ({ request }) => {
  for (const path of ["/", "/ops", "/ops/audit", "/t/acme", "/t/acme/settings", ...MISSING]) {
    const response = await request.get(path, { maxRedirects: 0 });
    const location = response.headers().location!;
    const target = new URL(location, "http://localhost");
    expect(target.pathname + target.search).toBe(`/signin?callbackUrl=${encodeURIComponent(path)}`);
    // Next.js writes the target of a redirect as its body: that and nothing else.
    expect({ path, status: response.status(), body: await response.text() }).toEqual({ path, status: 307, body: location });
  }
});
