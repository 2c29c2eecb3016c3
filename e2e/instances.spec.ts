// The instances list: paging through 1,000 instances with "Load more" shows each exactly once.
import { expect, test } from "@playwright/test";
import { randomUUID } from "node:crypto";
import { createTenantKey, signIn } from "./fixtures.ts";

test("paging through 1,000 instances returns each exactly once", async ({ page, request }) => {
  test.setTimeout(120_000);
  const key = await createTenantKey("acme", "paging-e2e");
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const sequenceId = randomUUID();
  const created = await request.post("/api/v1/sequences", {
    headers,
    data: {
      id: sequenceId, tenant_id: "acme", namespace: "default", name: `paging-${Date.now()}`, version: 1,
      created_at: new Date().toISOString(),
      // Due far in the future: the engine leaves them alone while the test pages.
      blocks: [{ type: "step", id: "wait", handler: "noop" }],
    },
  });
  expect(created.status()).toBe(201);
  const farFuture = new Date(Date.now() + 86_400_000).toISOString();
  const instances = Array.from({ length: 1000 }, () => ({ sequence_id: sequenceId, tenant_id: "acme", namespace: "default", next_fire_at: farFuture }));
  const batch = await request.post("/api/v1/instances/batch", { headers, data: { instances } });
  expect(batch.status()).toBe(201);
  expect(await batch.json()).toEqual({ count: 1000 });

  await signIn(page, "member@acme.test");
  await page.goto(`/t/acme/instances?sequence=${sequenceId}`);
  const rows = page.getByRole("table", { name: "Instances" }).locator("tbody tr");
  await expect(rows).toHaveCount(50);
  const more = page.getByRole("button", { name: "Load more" });
  for (let shown = 50; shown < 1000; shown += 50) {
    await more.click();
    await expect(rows).toHaveCount(shown + 50);
  }
  await expect(more).toHaveCount(0);
  const ids = await page.getByRole("table", { name: "Instances" }).locator("tbody tr a").evaluateAll((links) => links.map((a) => a.getAttribute("title")));
  expect(ids).toHaveLength(1000);
  expect(new Set(ids).size).toBe(1000);
});
