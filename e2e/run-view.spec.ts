// The instance page as a run view (issue 17, item 4), in Chromium: a failed run says which step
// failed, with what error, HTTP status and on which attempt, without a click; each block opens a
// panel with its attempts; Retry runs a failed instance again and the page follows it to the end;
// a parallel's two running steps sit side by side in the waterfall; a failure a try_catch caught
// stays readable on its step. Screenshots of the panel and the waterfall are kept.
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { E2E_RUN_VIEW_VENDOR_PORT } from "./env.ts";
import { createTenantKey, signIn } from "./fixtures.ts";

const VENDOR = `http://127.0.0.1:${E2E_RUN_VIEW_VENDOR_PORT}`;

/** Answers 503 `{"error":"vendor down"}` on /down until `healthy`, then `{ok: true}`. */
let healthy = false;
let vendor: http.Server;
let headers: Record<string, string>;

test.beforeAll(async () => {
  vendor = http.createServer((request, response) => {
    request.resume();
    if (request.url?.startsWith("/down") && !healthy) {
      response.writeHead(503, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: "vendor down" }));
    } else {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ok: true }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    vendor.once("error", reject);
    vendor.listen(E2E_RUN_VIEW_VENDOR_PORT, "127.0.0.1", resolve);
  });
  const key = await createTenantKey("acme", "run-view-e2e");
  headers = { "x-api-key": key, "content-type": "application/json" };
});

test.afterAll(async () => {
  vendor.closeAllConnections();
  await new Promise<void>((resolve) => vendor.close(() => resolve()));
});

// ------------------------------------------------------------------------------- helpers

const step = (id: string, handler: string, params: unknown = null, extra: object = {}) => ({ type: "step", id, handler, params, ...extra });
const down = (id: string, extra: object = {}) => step(id, "http_request", { method: "GET", url: `${VENDOR}/down`, timeout_ms: 5_000 }, extra);

/** A sequence of `blocks` in acme, and one instance of it, started now: the instance id. */
async function run(request: APIRequestContext, name: string, blocks: unknown[]): Promise<string> {
  const sequenceId = randomUUID();
  const created = await request.post("/api/v1/sequences", {
    headers,
    data: { id: sequenceId, tenant_id: "acme", namespace: "default", name: `${name}-${Date.now()}`, version: 1, created_at: new Date().toISOString(), blocks },
  });
  expect(created.status()).toBe(201);
  const started = await request.post("/api/v1/instances", { headers, data: { sequence_id: sequenceId, tenant_id: "acme", namespace: "default" } });
  expect(started.status()).toBe(201);
  return ((await started.json()) as { id: string }).id;
}

async function untilState(request: APIRequestContext, id: string, state: string) {
  await expect(async () => {
    const response = await request.get(`/api/v1/instances/${id}`, { headers });
    expect(((await response.json()) as { state: string }).state).toBe(state);
  }).toPass({ timeout: 20_000 });
}

const treeNode = (page: Page, blockId: string) => page.getByRole("list", { name: "Block tree" }).locator(`button.tree-node[data-block-id="${blockId}"]`);
const panel = (page: Page) => page.getByRole("complementary", { name: /^Block / });
const bar = (page: Page, blockId: string) => page.locator(`.wf-row[data-block-id="${blockId}"] .wf-bar`);

async function shot(page: Page, name: string, target?: { locator: ReturnType<Page["locator"]> }) {
  const path = test.info().outputPath(`${name}.png`);
  if (target) await target.locator.screenshot({ path });
  else await page.screenshot({ path, fullPage: true });
}

// ------------------------------------------------------------------------------- tests

test("a failed run explains itself without a click, shows its attempts and retries to completion", async ({ page, request }) => {
  test.setTimeout(90_000);
  healthy = false;
  const id = await run(request, "run-view-fail", [
    step("prepare", "noop"),
    down("fetch", { retry: { max_attempts: 3, initial_backoff: 300, max_backoff: 300 } }),
    step("after", "noop"),
  ]);
  await untilState(request, id, "failed");

  await signIn(page, "admin@acme.test");
  await page.goto(`/t/acme/instances/${id}`);
  // At the top, nothing expanded: the step, its error text, the HTTP status, the handler and the attempt.
  const summary = page.getByRole("alert").filter({ hasText: "This run failed" });
  await expect(summary).toContainText("Step fetch (http_request) failed on attempt 3 of 3");
  await expect(summary).toContainText("HTTP 503");
  await expect(summary).toContainText("vendor down");
  await expect(summary).toContainText("handler http_request");
  await expect(summary).not.toContainText("__error__");
  // The tree says it inline too: attempts, duration and the error.
  await expect(treeNode(page, "fetch")).toContainText("3 attempts");
  await expect(treeNode(page, "fetch")).toContainText("vendor down");
  await expect(treeNode(page, "prepare")).toContainText("completed");

  // The step's panel, opened from the keyboard: its attempts, each with its error.
  await treeNode(page, "fetch").focus();
  await page.keyboard.press("Enter");
  await expect(treeNode(page, "fetch")).toHaveAttribute("aria-pressed", "true");
  const details = panel(page);
  await expect(details).toContainText("fetch");
  await expect(details).toContainText("failed on attempt 3 of 3");
  await expect(details.getByText(`"url": "${VENDOR}/down"`)).toBeVisible();
  await expect(details).toContainText("resolved to are not stored");
  const attempts = details.getByRole("table", { name: "Attempts" });
  const rows = attempts.locator("tbody tr[data-outcome]");
  await expect(rows).toHaveCount(3);
  for (let i = 0; i < 3; i++) {
    await expect(rows.nth(i).getByRole("rowheader")).toHaveText(String(i + 1));
    await expect(rows.nth(i)).toHaveAttribute("data-outcome", "failed");
    await expect(rows.nth(i)).toContainText("engine");
    // Its error, on the row under it.
    await expect(attempts.locator(`tr[data-error-of="${i + 1}"]`)).toContainText("HTTP 503 Service Unavailable: vendor down");
  }
  // Retry from this step is offered on a failed top-level block.
  await expect(details.getByRole("button", { name: "Retry from step fetch" })).toBeVisible();
  // The waterfall has a red bar per failed attempt.
  await expect(bar(page, "fetch")).toHaveCount(3);
  await expect(bar(page, "fetch").first()).toHaveAttribute("data-tone", "failed");
  await expect(bar(page, "fetch").first()).toHaveAttribute("aria-label", /^fetch, attempt 1: started \+\d+ ms \(\d\d:\d\d:\d\d\.\d{3} UTC\), took \d+ ms, failed: HTTP 503/);
  // The outputs timeline shows no error JSON.
  await expect(page.getByRole("main")).not.toContainText('"__error__"');
  // Tall enough for the whole panel (it scrolls within the window's height).
  await page.setViewportSize({ width: 1280, height: 1500 });
  await shot(page, "run-view-failed-panel");

  // Retry, confirmed; the vendor has recovered, so the page follows it to completed.
  healthy = true;
  await summary.getByRole("button", { name: "Retry instance" }).click();
  await page.getByRole("group", { name: "Confirm: Retry instance" }).getByRole("button", { name: "Retry" }).click();
  const header = page.locator(".page-header .header-row .badge");
  await expect(header).toHaveText(/scheduled|running|completed/);
  await expect(header).toHaveText("completed", { timeout: 20_000 });
  await expect(page.getByRole("alert").filter({ hasText: "This run failed" })).toHaveCount(0);
  await expect(treeNode(page, "after")).toContainText("completed");
  await expect(treeNode(page, "fetch")).toContainText("completed");
  await expect(panel(page)).toContainText("1 attempt in this run (attempt 4 in all; up to 3 allowed)");
  await shot(page, "run-view-retried");

  // "Retry from this step" on the last top-level block: it runs again (a new output row), nothing before it does.
  const outputsOf = async () =>
    ((await (await request.get(`/api/v1/instances/${id}/outputs`, { headers })).json()) as { block_id: string; created_at: string }[]);
  const before = await outputsOf();
  const firstAfter = before.find((o) => o.block_id === "after")!.created_at;
  await treeNode(page, "after").click();
  await panel(page).getByRole("button", { name: "Retry from step after" }).click();
  await page.getByRole("group", { name: "Confirm: Retry from step after" }).getByRole("button", { name: "Retry from here" }).click();
  await expect(async () => {
    const outputs = await outputsOf();
    expect(Date.parse(outputs.find((o) => o.block_id === "after")!.created_at)).toBeGreaterThan(Date.parse(firstAfter));
    expect(outputs.find((o) => o.block_id === "prepare")!.created_at).toBe(before.find((o) => o.block_id === "prepare")!.created_at);
  }).toPass({ timeout: 20_000 });
  await expect(header).toHaveText("completed");
});

test("a parallel's two running sleeps sit side by side in the waterfall and read as running", async ({ page, request }) => {
  const id = await run(request, "run-view-parallel", [
    {
      type: "parallel",
      id: "both",
      branches: [[step("nap-a", "sleep", { duration_ms: 600_000 })], [step("nap-b", "sleep", { duration_ms: 600_000 })]],
    },
  ]);
  try {
    await signIn(page, "member@acme.test");
    await page.goto(`/t/acme/instances/${id}`);
    // Live: the page polls until both steps have started.
    await expect(treeNode(page, "nap-a")).toContainText(/running for \d/, { timeout: 15_000 });
    await expect(treeNode(page, "nap-b")).toContainText(/running for \d/);
    await expect(treeNode(page, "nap-a")).not.toContainText("pending");
    await expect(page.getByText("Nothing has run yet")).toHaveCount(0);

    await expect(bar(page, "nap-a")).toHaveCount(1);
    await expect(bar(page, "nap-b")).toHaveCount(1);
    await expect(bar(page, "nap-a")).toHaveAttribute("data-tone", "running");
    // Let them run a little, so each bar spans most of the track.
    await page.waitForTimeout(2_500);
    const a = (await bar(page, "nap-a").boundingBox())!;
    const b = (await bar(page, "nap-b").boundingBox())!;
    expect(a.width).toBeGreaterThan(20);
    expect(b.width).toBeGreaterThan(20);
    // Overlapping horizontally: each starts before the other ends.
    expect(a.x).toBeLessThan(b.x + b.width);
    expect(b.x).toBeLessThan(a.x + a.width);
    await expect(bar(page, "nap-a")).toHaveAttribute("title", /^nap-a, attempt 1: started \+\d+ ms \(.* UTC\), still running, took \d/);

    await treeNode(page, "nap-b").click();
    await expect(panel(page)).toContainText(/running for \d/);
    await expect(panel(page).getByRole("table", { name: "Attempts" }).locator("tbody tr[data-outcome]")).toHaveAttribute("data-outcome", "running");
    // A member is not offered retries.
    await expect(panel(page).getByRole("button", { name: /Retry from/ })).toHaveCount(0);
    await shot(page, "waterfall", { locator: page.locator("section", { has: page.getByRole("heading", { name: "Waterfall" }) }) });
    await shot(page, "run-view-running-panel");
  } finally {
    await request.post(`/api/v1/instances/${id}/signals`, { headers, data: { signal_type: "cancel" } });
  }
});

test("a failure a try_catch caught stays readable on its step", async ({ page, request }) => {
  healthy = false;
  const id = await run(request, "run-view-caught", [
    { type: "try_catch", id: "guard", try_block: [down("charge")], catch_block: [step("note", "log", { message: "caught: {{ context.data._error.message }}" })] },
  ]);
  await untilState(request, id, "completed");

  await signIn(page, "member@acme.test");
  await page.goto(`/t/acme/instances/${id}`);
  await expect(page.locator(".page-header .header-row .badge")).toHaveText("completed");
  await expect(treeNode(page, "charge")).toContainText("failed");
  await expect(treeNode(page, "charge")).toContainText("HTTP 503");
  await expect(treeNode(page, "charge")).toContainText("vendor down");
  await expect(treeNode(page, "note")).toContainText("completed");
  const caught = page.getByRole("region", { name: "A step failed and was caught" });
  await expect(caught).toContainText("guard caught it and the run went on");
  await expect(caught).toContainText("vendor down");

  await treeNode(page, "charge").click();
  await expect(panel(page).locator(".step-error")).toContainText("vendor down");
  await expect(panel(page).locator(".step-error")).toContainText("HTTP 503");
  await shot(page, "run-view-caught-panel");

  // On a phone the panel opens under the tree, in full width.
  await page.setViewportSize({ width: 390, height: 844 });
  const tree = (await page.getByRole("list", { name: "Block tree" }).boundingBox())!;
  const opened = (await panel(page).boundingBox())!;
  expect(opened.y).toBeGreaterThan(tree.y + tree.height);
  expect(opened.width).toBeGreaterThan(300);
  await shot(page, "run-view-phone");
});

test("a run of hundreds of blocks shows every one in the tree and the waterfall", async ({ page, request }) => {
  const BRANCHES = 200;
  const id = await run(request, "run-view-wide", [
    { type: "parallel", id: "fan", branches: Array.from({ length: BRANCHES }, (_, i) => [step(`n${i}`, "noop")]) },
    step("done", "noop"),
  ]);
  await untilState(request, id, "completed");

  await signIn(page, "member@acme.test");
  await page.goto(`/t/acme/instances/${id}`);
  await expect(page.getByRole("list", { name: "Block tree" }).locator("button.tree-node")).toHaveCount(BRANCHES + 2);
  await expect(page.locator(".wf-row")).toHaveCount(BRANCHES + 1);
  await expect(page.locator('.wf-bar[data-tone="succeeded"]')).toHaveCount(BRANCHES + 1);
  // The last branch's panel, from the waterfall's row label.
  await page.locator('.wf-row[data-block-id="n199"] .wf-label').click();
  await expect(panel(page)).toContainText("n199");
  await expect(panel(page)).toContainText("in fan, branch 200");
});
