// Tenant export from the operator console (issue 23): on initech's page (placed on eu-1) the
// operator clicks "Export data", sees the job running with rows per file, then done with each
// file's count, downloads a file and the manifest, and both parse. The export is held part-way
// (a lock on eu-1's triggers table, taken before the click and released after "running" shows),
// so its progress is seen whatever the machine's speed. The download route answers anyone but an
// operator, and an id no export has, exactly as a route that does not exist. At 390 px wide.
import fs from "node:fs/promises";
import { expect, test, type APIRequestContext } from "@playwright/test";
import pg from "pg";
import { E2E_SERVER_ENV } from "./env.ts";
import { DEMO_OPERATOR, signIn } from "./fixtures.ts";

test.use({ viewport: { width: 390, height: 844 } });

const TENANT = "initech";

/** Status and body of a GET, with `path` swapped for a placeholder (Next.js writes it into its 404 page). */
async function answerOf(request: APIRequestContext, path: string) {
  const response = await request.get(path, { maxRedirects: 0 });
  const segments = path.split("/").filter(Boolean);
  const body = segments.reduce((text, s) => text.replaceAll(`"${s}"`, '"<segment>"'), (await response.text()).replaceAll(path, "<path>"));
  return { status: response.status(), disposition: response.headers()["content-disposition"] ?? null, body };
}

test("an operator exports a demo tenant from its page: progress, then the files with their counts, downloaded", async ({ page, browser }, testInfo) => {
  const eu1 = new pg.Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${E2E_SERVER_ENV.BULKHEAD_PG_PORT}/bulkhead_eu1` });
  await eu1.connect();
  let held = false;
  try {
    await eu1.query("BEGIN");
    await eu1.query("LOCK TABLE triggers IN ACCESS EXCLUSIVE MODE");
    held = true;

    await signIn(page, DEMO_OPERATOR);
    await page.goto(`/ops/tenants/${TENANT}`);
    const card = page.getByRole("region", { name: "Export data", exact: true });
    await expect(card.getByText("No exports of this tenant yet.")).toBeVisible();
    await card.getByRole("button", { name: "Export data", exact: true }).click();

    // Held at triggers: the files before it have their rows, and the row moves every second.
    const status = card.getByRole("status");
    await expect(status).toContainText("running");
    const soFar = card.getByRole("table", { name: "Rows exported so far", exact: true });
    await expect(soFar.getByRole("row", { name: /^sequences\.ndjson [1-9]/ })).toBeVisible();
    await expect(card.getByRole("button", { name: "Exporting…", exact: true })).toBeDisabled();
    await card.screenshot({ path: testInfo.outputPath("tenant-export-running-390.png") });
    await eu1.query("ROLLBACK");
    held = false;

    await expect(status).toContainText("done");
    await expect(status).toContainText("from eu-1");
    const files = card.getByRole("table", { name: "Exported files", exact: true });
    const rowsShown = new Map<string, number>();
    for (const name of ["sequences", "instances", "outputs", "signals", "schedules", "triggers", "credentials"].map((n) => `${n}.ndjson`)) {
      const cells = await files.getByRole("row").filter({ has: page.getByRole("link", { name: `Download ${name}`, exact: true }) }).getByRole("cell").allInnerTexts();
      rowsShown.set(name, Number(cells[1]!.replaceAll(",", "")));
    }
    expect(rowsShown.get("sequences.ndjson")).toBeGreaterThan(0);
    expect(rowsShown.get("instances.ndjson")).toBeGreaterThan(0);
    await expect(card.getByRole("button", { name: "Export data", exact: true })).toBeEnabled();

    // The card fits the phone's width: nothing scrolls sideways.
    expect(await card.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: testInfo.outputPath("tenant-export-card-390.png") });

    // A file and the manifest, downloaded as attachments: NDJSON of the tenant, the counts shown.
    const [download] = await Promise.all([page.waitForEvent("download"), card.getByRole("link", { name: "Download sequences.ndjson", exact: true }).click()]);
    expect(download.suggestedFilename()).toBe(`${TENANT}-sequences.ndjson`);
    const lines = (await fs.readFile((await download.path())!, "utf8")).split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toHaveLength(rowsShown.get("sequences.ndjson")!);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ tenant_id: TENANT });

    const [manifestDownload] = await Promise.all([page.waitForEvent("download"), card.getByRole("link", { name: "Download manifest.json", exact: true }).click()]);
    const manifest = JSON.parse(await fs.readFile((await manifestDownload.path())!, "utf8"));
    expect(manifest).toMatchObject({ tenant: { id: TENANT, slug: TENANT, name: "Initech" }, backend: "eu-1" });
    expect(new Map(manifest.files.map((f: { name: string; rows: number }) => [f.name, f.rows]))).toEqual(rowsShown);

    // Anyone but an operator, and an id no export has: the answer of a route that does not exist.
    const href = (await card.getByRole("link", { name: "Download sequences.ndjson", exact: true }).getAttribute("href"))!;
    const id = href.split("/")[4]!;
    const missingRoute = await answerOf(page.request, `/api/ops/no-such-route/${id}/sequences.ndjson`);
    expect(missingRoute.status).toBe(404);
    expect(missingRoute.disposition).toBeNull();
    expect(await answerOf(page.request, `/api/ops/exports/${crypto.randomUUID()}/sequences.ndjson`)).toEqual(missingRoute);
    expect(await answerOf(page.request, `/api/ops/exports/${id}/secrets.ndjson`)).toEqual(missingRoute);
    for (const who of [null, "admin@initech.test", "member@initech.test"]) {
      const context = await browser.newContext();
      const other = await context.newPage();
      if (who) await signIn(other, who);
      expect({ who, ...(await answerOf(other.request, href)) }).toEqual({ who, ...missingRoute });
      await context.close();
    }
  } finally {
    if (held) await eu1.query("ROLLBACK").catch(() => {});
    await eu1.end();
  }
});
