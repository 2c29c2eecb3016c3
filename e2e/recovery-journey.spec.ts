// Issue 17's "done when", as a tenant admin does it in Chromium: from the overview, find the failed
// run, read its error and the attempt it failed on without expanding anything, fix the data and
// retry it, and watch it complete on the page, live, in under 5 clicks. A tenant of its own, so
// the overview's recent failures hold this run only; the run is also found by its short id.
import { randomBytes, randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import { bulkheadCli, createTenantKey, createTestUser, signIn } from "./fixtures.ts";

test("an admin goes from the overview to a failed run's error and retries it to completion in 3 clicks", async ({ page, request }) => {
  const tenant = `journey-${randomBytes(3).toString("hex")}`;
  await bulkheadCli("tenants", "create", tenant, "--name", "Journey Co");
  const password = "recovery-journey-e2e";
  const email = await createTestUser(password, { tenant, role: "admin" });
  const headers = { "x-api-key": await createTenantKey(tenant, "journey"), "content-type": "application/json" };

  // The charge fails while the order is flagged as held: its data has to be fixed first.
  const sequenceId = randomUUID();
  const created = await request.post("/api/v1/sequences", {
    headers,
    data: {
      id: sequenceId, tenant_id: tenant, namespace: "default", name: "checkout", version: 1, created_at: new Date().toISOString(),
      blocks: [
        { type: "step", id: "reserve", handler: "noop" },
        // A retry restarts the first unfinished top-level block from scratch: the route is chosen again.
        { type: "router", id: "payment", routes: [{ condition: "held == true", blocks: [
          { type: "step", id: "charge", handler: "fail", params: { message: "payment held for order {{ context.data.order }}", retryable: true },
            retry: { max_attempts: 2, initial_backoff: 1, max_backoff: 1 } },
        ] }], default: [{ type: "step", id: "charged", handler: "noop" }] },
        { type: "step", id: "confirm", handler: "log", params: { message: "order {{ context.data.order }} confirmed" } },
      ],
    },
  });
  expect(created.status()).toBe(201);
  const started = await request.post("/api/v1/instances", {
    headers, data: { sequence_id: sequenceId, tenant_id: tenant, namespace: "default", context: { data: { order: "A-102", held: true } } },
  });
  const { id } = (await started.json()) as { id: string };
  await expect.poll(async () => ((await (await request.get(`/api/v1/instances/${id}`, { headers })).json()) as { state: string }).state, { timeout: 20_000 })
    .toBe("failed");

  await signIn(page, email, password);
  await page.goto(`/t/${tenant}`);
  let clicks = 0;
  const failures = page.getByRole("table", { name: "Recent failures" });
  await failures.getByRole("link", { name: /open instance/ }).click();
  clicks++;
  await expect(page).toHaveURL(new RegExp(`/t/${tenant}/instances/${id}$`));

  // The error, where it failed and on which attempt, with nothing expanded.
  const summary = page.locator(".failure-summary");
  await expect(summary).toContainText("payment held for order A-102");
  await expect(summary).toContainText("charge");
  await expect(summary).toContainText("attempt 2 of 2");

  // The data is fixed (as an API client or another page would), then the run is retried here.
  const fixed = await request.patch(`/api/v1/instances/${id}/context`, { headers, data: { context: { data: { order: "A-102", held: false } } } });
  expect(fixed.status()).toBe(200);
  await page.getByRole("button", { name: "Retry instance" }).click();
  clicks++;
  await page.getByRole("button", { name: "Retry", exact: true }).click();
  clicks++;
  // Followed live: no reload, the page reaches completed by itself.
  await expect(page.locator(".header-row").getByText("completed", { exact: true })).toBeVisible({ timeout: 15_000 });
  expect(clicks).toBeLessThan(5);
  await page.screenshot({ path: test.info().outputPath("retried-to-completion.png"), fullPage: true });

  // The same run is found by its short id (the random tail of its id) on the instance list.
  await page.goto(`/t/${tenant}/instances?q=${id.slice(-12)}`);
  await expect(page.getByRole("table", { name: "Instances" }).locator("tbody tr")).toHaveCount(1);
  await expect(page.getByRole("table", { name: "Instances" })).toContainText(id.slice(-12));
});
