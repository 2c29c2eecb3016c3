// Lists follow the tenant's runs by server push (the change feed), not a timer: with the push
// live, the lists' own polling is a 60 s backstop, so a change that shows within 15 s came by
// push. And the change feed of one tenant tells nothing of another's runs.
import { randomBytes, randomUUID } from "node:crypto";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { bulkheadCli, createTenantKey, createTestUser, signIn } from "./fixtures.ts";

async function tenantWithSequence(request: APIRequestContext, prefix: string, blocks: unknown[]) {
  const tenant = `${prefix}-${randomBytes(3).toString("hex")}`;
  await bulkheadCli("tenants", "create", tenant, "--name", `${prefix} Co`);
  const key = await createTenantKey(tenant, prefix);
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const sequenceId = randomUUID();
  const created = await request.post("/api/v1/sequences", {
    headers,
    data: { id: sequenceId, tenant_id: tenant, namespace: "default", name: `${prefix}-seq`, version: 1, created_at: new Date().toISOString(), blocks },
  });
  expect(created.status()).toBe(201);
  const run = async () => {
    const response = await request.post("/api/v1/instances", { headers, data: { sequence_id: sequenceId, tenant_id: tenant, namespace: "default" } });
    expect(response.status()).toBe(201);
    return ((await response.json()) as { id: string }).id;
  };
  return { tenant, headers, run };
}

test("the instance list and the Failed view update by push as runs change state", async ({ page, request }) => {
  test.setTimeout(90_000);
  const { tenant, run } = await tenantWithSequence(request, "live", [
    { type: "step", id: "wait", handler: "sleep", params: { duration_ms: 1500 } },
    { type: "step", id: "boom", handler: "fail", params: { message: "vendor down" } },
  ]);
  const password = "live-lists-e2e";
  const email = await createTestUser(password, { tenant, role: "admin" });
  await signIn(page, email, password);

  const first = await run();
  await page.goto(`/t/${tenant}/instances`);
  await expect(page.getByRole("row").filter({ hasText: first.slice(-12) })).toBeVisible();
  await expect(page.getByText("· live")).toBeVisible({ timeout: 15_000 });
  const id = await run();
  const row = page.getByRole("row").filter({ hasText: id.slice(-12) });
  // Created, then running, then failed: each step shows without a reload or the list's timer.
  await expect(row.getByText("failed")).toBeVisible({ timeout: 15_000 });
  await page.screenshot({ path: test.info().outputPath("instance-list-live.png"), fullPage: true });

  await page.goto(`/t/${tenant}/failed`);
  const groups = page.getByTestId("failure-group");
  await expect(groups).toHaveCount(1);
  await expect(groups.nth(0).locator(".failure-count")).toHaveText("2", { timeout: 15_000 }); // both runs above
  await run();
  await expect(groups.nth(0).locator(".failure-count")).toHaveText("3", { timeout: 15_000 });
});

test("a member's change notices are their tenant's only, and another tenant's are a 404 like a missing one", async ({ page, request }) => {
  const mine = await tenantWithSequence(request, "notice", [{ type: "step", id: "n", handler: "noop" }]);
  const theirs = await tenantWithSequence(request, "other", [{ type: "step", id: "n", handler: "noop" }]);
  const password = "change-notices-e2e";
  const email = await createTestUser(password, { tenant: mine.tenant, role: "member" });
  await signIn(page, email, password);

  const answer = async (tenant: string) => page.evaluate(async (path) => {
    const response = await fetch(path);
    return { status: response.status, body: await response.text() };
  }, `/api/live/t/${tenant}/changes`);
  expect(await answer(theirs.tenant)).toEqual(await answer(`no-such-${randomBytes(3).toString("hex")}`));
  expect((await answer(theirs.tenant)).status).toBe(404);

  // The stream of my tenant announces my runs, and stays quiet for theirs.
  const events = await page.evaluate(async ({ path }) => {
    const source = new EventSource(path);
    const seen: string[] = [];
    source.addEventListener("changed", (event) => seen.push((event as MessageEvent).lastEventId));
    await new Promise((resolve) => source.addEventListener("open", resolve, { once: true }));
    (window as unknown as { seen: string[] }).seen = seen;
    return seen.length;
  }, { path: `/api/live/t/${mine.tenant}/changes` });
  expect(events).toBe(0);
  await theirs.run();
  await page.waitForTimeout(2_000);
  expect(await page.evaluate(() => (window as unknown as { seen: string[] }).seen.length)).toBe(0);
  await mine.run();
  await expect.poll(() => page.evaluate(() => (window as unknown as { seen: string[] }).seen.length), { timeout: 10_000 }).toBeGreaterThan(0);
});
