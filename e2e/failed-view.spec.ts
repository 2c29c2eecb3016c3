// The Failed view: a tenant's failed runs grouped by why they failed, the largest group first,
// and a whole group retried in one action. A tenant of its own, so other specs' failures do not
// change the counts.
import { randomBytes, randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import { bulkheadCli, createTenantKey, createTestUser, signIn } from "./fixtures.ts";

test("failures group by error, ids and numbers aside; retrying a group retries its runs only", async ({ page, request }) => {
  test.setTimeout(90_000);
  const tenant = `failed-${randomBytes(3).toString("hex")}`;
  await bulkheadCli("tenants", "create", tenant, "--name", "Failing Co");
  const password = "failed-view-e2e";
  const email = await createTestUser(password, { tenant, role: "admin" });
  const key = await createTenantKey(tenant, "failed-view");
  const headers = { "x-api-key": key, "content-type": "application/json" };

  const sequence = async (name: string, message: string) => {
    const id = randomUUID();
    const created = await request.post("/api/v1/sequences", {
      headers,
      data: {
        id, tenant_id: tenant, namespace: "default", name, version: 1, created_at: new Date().toISOString(),
        blocks: [{ type: "step", id: "charge", handler: "fail", params: { message } }],
      },
    });
    expect(created.status()).toBe(201);
    return id;
  };
  const declined = await sequence("charge-card", "card declined for order {{ context.data.order }}");
  const refused = await sequence("ship", "carrier refused the parcel");
  const run = async (sequenceId: string, data: unknown) => {
    const created = await request.post("/api/v1/instances", { headers, data: { sequence_id: sequenceId, tenant_id: tenant, namespace: "default", context: { data } } });
    expect(created.status()).toBe(201);
  };
  for (const order of [101, 102, 103]) await run(declined, { order });
  await run(refused, {});

  await signIn(page, email, password);
  await page.goto(`/t/${tenant}/failed`);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Failed runs");
  const groups = page.getByTestId("failure-group");
  await expect(groups).toHaveCount(2, { timeout: 20_000 });
  // Largest first; the message as text, the newest of its group.
  await expect(groups.nth(0).locator(".failure-count")).toHaveText("3");
  await expect(groups.nth(0).locator(".failure-message")).toHaveText(/^card declined for order 10[123]$/);
  await expect(groups.nth(1).locator(".failure-count")).toHaveText("1");
  await expect(groups.nth(1).locator(".failure-message")).toHaveText("carrier refused the parcel");
  await page.screenshot({ path: test.info().outputPath("failed-view.png"), fullPage: true });

  await groups.nth(0).getByRole("button", { name: "Retry all 3 in this group" }).click();
  await groups.nth(0).getByRole("button", { name: "Confirm" }).click();
  await expect(page.getByRole("status").filter({ hasText: "retried" })).toHaveText("3 retried.");
  // The other group was not retried: its one run kept its first and only failure.
  const list = await request.get(`/api/v1/instances?tenant_id=${tenant}&sequence_id=${refused}`, { headers });
  const { items } = (await list.json()) as { items: { state: string; context: { runtime: { total_steps_executed: number } } }[] };
  expect(items.map((r) => [r.state, r.context.runtime.total_steps_executed])).toEqual([["failed", 1]]);
  // The retried runs fail again (the handler always fails) and come back to their group.
  await expect(groups.nth(0).locator(".failure-count")).toHaveText("3", { timeout: 20_000 });
});
