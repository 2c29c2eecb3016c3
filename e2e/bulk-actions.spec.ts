// Bulk actions on the instance list: a dry run's count first, then the action on every instance the
// list's state and sequence filters match. A tenant of its own, so the counts are this spec's.
import { randomBytes, randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import { bulkheadCli, createTestUser, signIn } from "./fixtures.ts";

test("bulk cancel and reschedule act on the filtered sequence only, after a counted preview", async ({ page, request, browser }) => {
  test.setTimeout(120_000);
  const tenant = `bulk-${randomBytes(3).toString("hex")}`;
  await bulkheadCli("tenants", "create", tenant, "--name", "Bulk Co");
  const password = "bulk-actions-e2e";
  const email = await createTestUser(password, { tenant, role: "admin" });
  const key = (await bulkheadCli("api-keys", "create", tenant, "--name", "bulk-actions")).trim().split("\n").at(-1)!;
  const headers = { "x-api-key": key, "content-type": "application/json" };

  const sequence = async (name: string) => {
    const id = randomUUID();
    const created = await request.post("/api/v1/sequences", {
      headers,
      data: { id, tenant_id: tenant, namespace: "default", name, version: 1, created_at: new Date().toISOString(), blocks: [{ type: "step", id: "wait", handler: "noop" }] },
    });
    expect(created.status()).toBe(201);
    return id;
  };
  // Due a day ahead: the engine leaves them scheduled until the test acts on them.
  const farFuture = new Date(Date.now() + 86_400_000).toISOString();
  const start = async (sequenceId: string, count: number) => {
    const instances = Array.from({ length: count }, () => ({ sequence_id: sequenceId, tenant_id: tenant, namespace: "default", next_fire_at: farFuture }));
    const batch = await request.post("/api/v1/instances/batch", { headers, data: { instances } });
    expect(batch.status()).toBe(201);
  };
  const nightly = await sequence("nightly-report");
  const other = await sequence("other-job");
  await start(nightly, 30);
  await start(other, 4);

  await signIn(page, email, password);
  await page.goto(`/t/${tenant}/instances`);
  await page.getByLabel("Sequence").selectOption({ label: "nightly-report v1 (default)" });
  await page.getByRole("checkbox", { name: "scheduled" }).check();
  const rows = page.getByRole("table", { name: "Instances" }).locator("tbody tr");
  await expect(rows).toHaveCount(30);
  const bulk = page.getByRole("region", { name: "Bulk actions" });

  // Reschedule: the preview counts the scheduled ones the same way, then moves them.
  await bulk.getByRole("button", { name: "Bulk actions" }).click();
  await bulk.getByRole("button", { name: "Reschedule…" }).click();
  await bulk.getByLabel("Move due time by").fill("2");
  await bulk.getByLabel("Unit").selectOption("hours");
  await bulk.getByRole("button", { name: "Preview" }).click();
  await expect(bulk.locator(".bulk-preview")).toHaveText("This will reschedule 30 scheduled instances of this sequence 2 hours later.");
  await bulk.getByRole("button", { name: "Confirm" }).click();
  await expect(bulk.locator(".bulk-summary")).toHaveText("Done: 30 rescheduled.");
  await bulk.getByRole("button", { name: "Close" }).click();

  // Cancel: preview, screenshot, confirm, summary.
  await bulk.getByRole("button", { name: "Bulk actions" }).click();
  await bulk.getByRole("button", { name: "Cancel…" }).click();
  await expect(bulk.locator(".bulk-preview")).toHaveText("This will cancel 30 instances of this sequence.");
  await page.screenshot({ path: test.info().outputPath("bulk-cancel-preview.png"), fullPage: true });
  // The call is held back on its way to the server until the progress has been seen, as a
  // large selection's calls take a while each.
  let letGo = () => {};
  const held = new Promise<void>((resolve) => (letGo = resolve));
  await page.route("**/api/trpc/instances.batchAction**", async (route) => {
    await held;
    await route.continue();
  });
  await bulk.getByRole("button", { name: "Confirm" }).click();
  await expect(bulk.locator(".bulk-progress")).toHaveText("Cancelling… 0 of 30 done");
  await expect(bulk.getByRole("progressbar", { name: "cancel progress" })).toBeVisible();
  await expect(bulk.getByRole("button", { name: "Stop after this call" })).toBeEnabled();
  await page.screenshot({ path: test.info().outputPath("bulk-cancel-in-progress.png"), fullPage: true });
  letGo();
  await expect(bulk.locator(".bulk-summary")).toHaveText("Done: 30 cancelled, 0 skipped, 0 failed.");
  await page.unroute("**/api/trpc/instances.batchAction**");
  await page.screenshot({ path: test.info().outputPath("bulk-cancel-summary.png"), fullPage: true });

  // The engine takes the cancel signals; the list (all states now) follows.
  await page.getByRole("checkbox", { name: "scheduled" }).uncheck();
  await expect(rows).toHaveCount(30);
  await expect(rows.locator("td:nth-child(3)", { hasText: "cancelled" })).toHaveCount(30, { timeout: 30_000 });

  // The other sequence was not touched.
  const list = await request.get(`/api/v1/instances?tenant_id=${tenant}&sequence_id=${other}`, { headers });
  const { items } = (await list.json()) as { items: { state: string }[] };
  expect(items.map((item) => item.state)).toEqual(["scheduled", "scheduled", "scheduled", "scheduled"]);

  // Nothing left to cancel: the preview says so.
  await bulk.getByRole("button", { name: "Close" }).click();
  await bulk.getByRole("button", { name: "Bulk actions" }).click();
  await bulk.getByRole("button", { name: "Cancel…" }).click();
  await expect(bulk.locator(".bulk-preview")).toHaveText("Nothing to do: no instances of this sequence match these filters.");

  // A search the bulk filter cannot express turns bulk actions off rather than act on more.
  await page.goto(`/t/${tenant}/instances?sequence=${nightly}&q=report`);
  await expect(bulk.getByRole("button", { name: "Bulk actions" })).toBeDisabled();
  await expect(bulk).toContainText("Clear the search to use them.");

  // A member of the tenant does not get them.
  const memberEmail = await createTestUser(password, { tenant, role: "member" });
  const memberContext = await browser.newContext();
  const memberPage = await memberContext.newPage();
  await signIn(memberPage, memberEmail, password);
  await memberPage.goto(`/t/${tenant}/instances`);
  await expect(memberPage.getByRole("table", { name: "Instances" }).locator("tbody tr")).toHaveCount(34);
  await expect(memberPage.getByRole("button", { name: "Bulk actions" })).toHaveCount(0);
  await memberContext.close();
});
