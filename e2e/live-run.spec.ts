// The instance page follows its run by server push, in Chromium: Pause on a running 10-minute
// sleep shows the instance paused within the push's bound (polling would take 3 s), the run
// graph draws the running step as running, and clicking a block in the graph opens its panel.
import { randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import { createTenantKey, signIn } from "./fixtures.ts";

test("Pause on a running sleep shows paused within 2 s, live; the graph shows and selects the step", async ({ page, request }) => {
  const key = await createTenantKey("acme", "live-run-e2e");
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const sequenceId = randomUUID();
  const created = await request.post("/api/v1/sequences", {
    headers,
    data: {
      id: sequenceId, tenant_id: "acme", namespace: "default", name: `live-${Date.now()}`, version: 1, created_at: new Date().toISOString(),
      blocks: [{ type: "step", id: "warm_up", handler: "noop" }, { type: "step", id: "nap", handler: "sleep", params: { duration_ms: 600_000 } }],
    },
  });
  expect(created.status()).toBe(201);
  const started = await request.post("/api/v1/instances", { headers, data: { sequence_id: sequenceId, tenant_id: "acme", namespace: "default" } });
  const { id } = (await started.json()) as { id: string };

  await signIn(page, "admin@acme.test");
  await page.goto(`/t/acme/instances/${id}`);
  const graph = page.getByRole("region", { name: "Run" });
  await expect(graph.getByText("Live: changes appear as they happen.")).toBeVisible();
  const nap = graph.locator('[data-block-id="nap"]');
  await expect(nap).toHaveAttribute("data-state", "running", { timeout: 15_000 });
  await expect(graph.locator('[data-block-id="warm_up"]')).toHaveAttribute("data-state", "completed");
  // The graph draws the run's order: warm_up above nap.
  const [first, second] = [await graph.locator('[data-block-id="warm_up"]').boundingBox(), await nap.boundingBox()];
  expect(first!.y + first!.height).toBeLessThanOrEqual(second!.y);

  await nap.click();
  await expect(page.getByRole("complementary", { name: "Block nap" })).toContainText("sleep");
  await page.screenshot({ path: test.info().outputPath("live-run-graph.png"), fullPage: true });

  const clicked = Date.now();
  await page.getByRole("group", { name: "Instance actions" }).getByRole("button", { name: "Pause" }).click();
  await expect(page.locator(".header-row").getByText("paused", { exact: true })).toBeVisible({ timeout: 2_000 });
  console.log(`[live] pause shown ${Date.now() - clicked} ms after the click`);
  await expect(nap).toHaveAttribute("data-state", /running|pending|waiting/);

  // Done with it: cancel, and the page shows the end without a reload.
  await request.post(`/api/v1/instances/${id}/signals`, { headers, data: { signal_type: "cancel" } });
  await expect(page.locator(".header-row").getByText("cancelled", { exact: true })).toBeVisible({ timeout: 5_000 });
});
