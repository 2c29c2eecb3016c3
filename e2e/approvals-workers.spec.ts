// The Approvals and Workers pages, and the operator's fleet view, in the browser against a running
// engine: a member finds a running instance's human review in the Approvals inbox, answers it
// with a comment, sees it leave and the instance complete; a worker that polls through REST with
// the tenant's API key shows on the Workers page with its handler and in-flight claim, and in
// the operator console's fleet view. Every page fits a 390 px phone (tables scroll in their card).
import { randomUUID } from "node:crypto";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { bulkheadCli, createTenantKey, createTestUser, DEMO_OPERATOR, signIn } from "./fixtures.ts";

const PASSWORD = "approvals-e2e-pass";

async function createSequence(request: APIRequestContext, key: string, tenant: string, name: string, blocks: unknown[]): Promise<string> {
  const id = randomUUID();
  const created = await request.post("/api/v1/sequences", {
    headers: { "x-api-key": key },
    data: { id, tenant_id: tenant, namespace: "default", name, version: 1, created_at: new Date().toISOString(), blocks },
  });
  expect(created.status(), await created.text()).toBe(201);
  return id;
}

async function startInstance(request: APIRequestContext, key: string, tenant: string, sequenceId: string): Promise<string> {
  const created = await request.post("/api/v1/instances", { headers: { "x-api-key": key }, data: { sequence_id: sequenceId, tenant_id: tenant, namespace: "default" } });
  expect(created.status(), await created.text()).toBe(201);
  return ((await created.json()) as { id: string }).id;
}

const stateOf = async (request: APIRequestContext, key: string, id: string) =>
  ((await (await request.get(`/api/v1/instances/${id}`, { headers: { "x-api-key": key } })).json()) as { state: string }).state;

/** Nothing wider than the viewport at 390 px: wide tables scroll inside their card. */
async function fitsAPhone(page: Page, ready: () => Promise<void>) {
  await page.setViewportSize({ width: 390, height: 844 });
  await ready();
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
}

test("a member answers a waiting review from the Approvals inbox; a polling worker shows on the Workers page and in the fleet view", async ({ page, request, browser }, testInfo) => {
  test.setTimeout(120_000);
  const tenant = `appr-${randomUUID().slice(0, 8)}`;
  await bulkheadCli("tenants", "create", tenant, "--name", "Approvals Co");
  const email = await createTestUser(PASSWORD, { tenant, role: "member" });
  const key = await createTenantKey(tenant, "approvals-e2e");
  const handler = `resize_${randomUUID().slice(0, 6)}`;
  const workerId = `e2e-worker-${randomUUID().slice(0, 6)}`;

  const shipping = await createSequence(request, key, tenant, "ship-order", [
    { type: "step", id: "approve", handler: "log", params: { message: "approved" }, wait_for_input: {
      prompt: "Ship order A-102?", choices: [{ label: "Ship", value: "ship" }, { label: "Hold", value: "hold" }], allow_comment: true, store_as: "decision",
    } },
    { type: "step", id: "done", handler: "noop" },
  ]);
  const resizing = await createSequence(request, key, tenant, "resize-image", [{ type: "step", id: "resize", handler }]);
  const instanceId = await startInstance(request, key, tenant, shipping);
  await expect.poll(() => stateOf(request, key, instanceId), { timeout: 15_000 }).toBe("waiting");

  await signIn(page, email, PASSWORD);
  await page.goto(`/t/${tenant}`);
  const tenantNav = page.getByRole("navigation", { name: "Tenant pages" });

  await test.step("the Approvals inbox lists the waiting review, which an answer with a comment takes away", async () => {
    await tenantNav.getByRole("link", { name: "Approvals", exact: true }).click();
    await expect(page).toHaveURL(`/t/${tenant}/approvals`);
    const inbox = page.getByRole("list", { name: "Waiting approvals" });
    const item = inbox.getByRole("listitem").filter({ hasText: "Ship order A-102?" });
    await expect(item).toContainText("ship-order");
    await expect(item).toContainText(instanceId.slice(-12));
    await expect(item.getByRole("radio", { name: "Ship" })).toBeVisible();
    // The sequence filter: another sequence has nothing waiting.
    await page.getByLabel("Sequence").selectOption({ label: "resize-image v1" });
    await expect(page.getByText("Nothing of resize-image v1 waits for an answer.")).toBeVisible();
    await page.getByLabel("Sequence").selectOption({ label: "ship-order v1" });
    await expect(item).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath("approvals.png"), fullPage: true });
    await fitsAPhone(page, () => expect(item).toBeVisible());
    await page.screenshot({ path: testInfo.outputPath("approvals-390.png"), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });

    await item.getByRole("radio", { name: "Ship" }).check();
    await item.getByLabel("Comment (optional)").fill("Carrier confirmed the pickup.");
    await item.getByRole("button", { name: "Send answer" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Answer sent for Ship order A-102?" })).toBeVisible();
    await expect(page.getByText("Nothing of ship-order v1 waits for an answer.")).toBeVisible();
    await expect.poll(() => stateOf(request, key, instanceId), { timeout: 15_000 }).toBe("completed");
    const instance = (await (await request.get(`/api/v1/instances/${instanceId}`, { headers: { "x-api-key": key } })).json()) as { context: { data: Record<string, unknown> } };
    expect(instance.context.data.decision).toBe("ship");
    await page.goto(`/t/${tenant}/instances/${instanceId}`);
    await expect(page.getByText("completed", { exact: true }).first()).toBeVisible();
    await page.goto(`/t/${tenant}/approvals`);
    await expect(page.getByText("Nothing waits for an answer")).toBeVisible();
  });

  await test.step("a worker polling through REST shows on the Workers page with its handler and in-flight claim", async () => {
    const workInstance = await startInstance(request, key, tenant, resizing);
    let taskId = "";
    let claimEpoch = 0;
    // The engine makes the worker task once it runs the step; the worker polls until it is there.
    await expect.poll(async () => {
      const polled = await request.post("/api/v1/workers/tasks/poll", { headers: { "x-api-key": key }, data: { handler_name: handler, worker_id: workerId, version: "2.1.0" } });
      expect(polled.status()).toBe(200);
      const tasks = (await polled.json()) as { id: string; claim_epoch: number; instance_id: string }[];
      if (tasks[0]) ({ id: taskId, claim_epoch: claimEpoch } = tasks[0]);
      return tasks.map((t) => t.instance_id);
    }, { timeout: 15_000 }).toEqual([workInstance]);

    await page.goto(`/t/${tenant}`);
    await tenantNav.getByRole("link", { name: "Workers", exact: true }).click();
    await expect(page).toHaveURL(`/t/${tenant}/workers`);
    const row = page.getByRole("table", { name: "Workers" }).getByRole("row").filter({ hasText: workerId });
    await expect(row).toContainText(handler);
    await expect(row).toContainText("2.1.0");
    await expect(row).toContainText("alive");
    await expect(row.getByRole("cell").nth(6)).toHaveText("1");
    const claim = page.getByRole("table", { name: "Claimed tasks" }).getByRole("row").filter({ hasText: workerId });
    await expect(claim).toContainText(handler);
    await expect(claim).toContainText("ok");
    await expect(page.getByRole("listitem", { name: "Claimed: 1" })).toBeVisible();
    await expect(page.getByRole("table", { name: "Tasks by handler" }).getByRole("row").filter({ hasText: handler })).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath("workers.png"), fullPage: true });
    await fitsAPhone(page, () => expect(row).toBeVisible());
    await page.screenshot({ path: testInfo.outputPath("workers-390.png"), fullPage: true });

    await test.step("the operator sees the worker in the fleet view, naming its tenant", async () => {
      const operator = await (await browser.newContext()).newPage();
      await signIn(operator, DEMO_OPERATOR);
      await operator.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Workers", exact: true }).click();
      await expect(operator).toHaveURL("/ops/workers");
      const fleetRow = operator.getByRole("table", { name: "Fleet workers" }).getByRole("row").filter({ hasText: workerId });
      await expect(fleetRow).toContainText(tenant);
      await expect(fleetRow).toContainText(handler);
      await expect(fleetRow.getByRole("cell").nth(7)).toHaveText("1");
      await operator.screenshot({ path: testInfo.outputPath("fleet.png"), fullPage: true });
      await fitsAPhone(operator, () => expect(fleetRow).toBeVisible());
      await operator.context().close();
    });

    // The worker finishes: the claim is gone and the instance completes.
    const done = await request.post(`/api/v1/workers/tasks/${taskId}/complete`, { headers: { "x-api-key": key }, data: { worker_id: workerId, claim_epoch: claimEpoch, output: { resized: true } } });
    expect(done.status(), await done.text()).toBe(200);
    await expect.poll(() => stateOf(request, key, workInstance), { timeout: 15_000 }).toBe("completed");
    await expect(page.getByText("No task is claimed right now.")).toBeVisible({ timeout: 15_000 });
  });

  await test.step("the fleet view is no page for a tenant member", async () => {
    const response = await page.goto("/ops/workers");
    expect(response?.status()).toBe(404);
  });
});
