// Cron schedules in the browser: a tenant admin schedules a sequence every second on the
// Schedules page, reads the expression in words with its next fires, and watches the schedule's
// first instance appear without reloading; then disables and deletes it.
import { randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import { bulkheadCli, createTestUser, signIn } from "./fixtures.ts";

test("a schedule made on the Schedules page fires, and its first run shows up live", async ({ page, request }, testInfo) => {
  const tenant = `cron-${randomUUID().slice(0, 8)}`;
  await bulkheadCli("tenants", "create", tenant, "--name", "Cron Co");
  const password = "schedules-e2e-pass";
  const email = await createTestUser(password, { tenant, role: "admin" });
  const key = (await bulkheadCli("api-keys", "create", tenant, "--name", "schedules")).trim().split("\n").at(-1)!;
  const sequenceId = randomUUID();
  const created = await request.post("/api/v1/sequences", {
    headers: { "x-api-key": key, "content-type": "application/json" },
    data: { id: sequenceId, tenant_id: tenant, namespace: "default", name: "heartbeat", version: 1, created_at: new Date().toISOString(), blocks: [{ type: "step", id: "beat", handler: "noop" }] },
  });
  expect(created.status()).toBe(201);

  await signIn(page, email, password);
  await page.goto(`/t/${tenant}`);
  await page.getByRole("link", { name: "Schedules", exact: true }).click();
  await expect(page).toHaveURL(`/t/${tenant}/schedules`);
  await expect(page.getByText("No schedules yet.")).toBeVisible();

  const form = page.getByRole("form", { name: "Add a schedule" });
  await form.getByLabel("Sequence").selectOption({ label: "heartbeat v1" });
  await form.getByLabel("Cron expression").fill("0 0 * * 0");
  // The server's own words for a refused expression, before anything is saved.
  await expect(page.getByLabel("Preview").getByRole("alert")).toContainText("invalid cron expression: day of week: 0 is out of range 1-7");
  await form.getByLabel("Cron expression").fill("* * * * * *");
  await form.getByLabel("Time zone").fill("America/New_York");
  await expect(page.getByRole("list", { name: "Next fires" }).getByRole("listitem")).toHaveCount(5);
  await form.getByRole("button", { name: "Add schedule" }).click();

  const card = page.getByRole("listitem", { name: "Schedule * * * * * * of heartbeat v1" });
  await expect(card).toContainText("Every second");
  await expect(card).toContainText("enabled");
  await expect(card.getByRole("table", { name: "Next fires of * * * * * *" }).locator("tbody tr")).toHaveCount(5);
  await expect(card.getByRole("columnheader", { name: "Next fires in America/New_York" })).toBeVisible();

  // The engine's 1 s tick fires it; the page follows the tenant's changes, no reload.
  const firstRun = card.getByLabel("Latest runs").getByRole("link").first();
  await expect(firstRun).toBeVisible({ timeout: 15_000 });
  await page.screenshot({ path: testInfo.outputPath("schedules-page.png"), fullPage: true });
  const instanceId = (await firstRun.getAttribute("href"))!.split("/").at(-1)!;
  const instance = await request.get(`/api/v1/instances/${instanceId}`, { headers: { "x-api-key": key } });
  expect(instance.status()).toBe(200);
  const body = (await instance.json()) as { sequence_id: string; timezone: string; metadata: { cron_schedule_id: string } };
  expect(body).toMatchObject({ sequence_id: sequenceId, timezone: "America/New_York" });
  const schedules = await request.get("/api/v1/cron", { headers: { "x-api-key": key } });
  const [schedule] = (await schedules.json()) as { id: string }[];
  expect(body.metadata.cron_schedule_id).toBe(schedule!.id);

  await card.getByRole("button", { name: "Disable schedule * * * * * *" }).click();
  await expect(card).toContainText("disabled");
  await card.getByRole("button", { name: "Delete schedule * * * * * *" }).click();
  await card.getByRole("button", { name: "Confirm" }).click();
  await expect(page.getByText("No schedules yet.")).toBeVisible();

  // The sequence's own page lists its schedules too (none now).
  await page.goto(`/t/${tenant}/sequences/${sequenceId}`);
  await expect(page.getByRole("heading", { name: "Schedules" })).toBeVisible();
  await expect(page.getByText("No schedules yet.")).toBeVisible();
});
