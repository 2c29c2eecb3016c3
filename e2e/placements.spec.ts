// The operator console's placements: the registered backends with their health, then on a fresh
// tenant's page (found with the tenants table's search) a stale "Advance placement" refused with
// the conflict shown, and a move of the tenant (with data) from primary to eu-1 watched to
// "done", after which the tenant's API still reads its rows.
// The demo tenants are never moved: other specs use them.
import { expect, test, type Page } from "@playwright/test";
import { randomUUID } from "node:crypto";
import { DEMO_OPERATOR, bulkheadCli, signIn } from "./fixtures.ts";

const rowOf = (page: Page, table: string, cell: string) =>
  page.getByRole("table", { name: table, exact: true }).getByRole("row").filter({ has: page.getByRole("cell", { name: cell, exact: true }) });

test("an operator sees the backends, is refused a stale placement, and moves a tenant with its data", async ({ page, request }) => {
  test.setTimeout(120_000);
  const slug = `move-${Date.now().toString(36)}`;
  await bulkheadCli("tenants", "create", slug);
  const key = (await bulkheadCli("api-keys", "create", slug, "--name", "x")).trim().split("\n").at(-1)!;
  const headers = { "x-api-key": key };

  // Some data: a sequence and instances, most due far in the future (they wait, and are copied).
  const sequence = {
    id: randomUUID(), tenant_id: slug, namespace: "default", name: `moved-${Date.now()}`, version: 1, created_at: new Date().toISOString(),
    blocks: [{ type: "step", id: "wait", handler: "noop" }],
  };
  expect((await request.post("/api/v1/sequences", { headers, data: sequence })).status()).toBe(201);
  const farFuture = new Date(Date.now() + 86_400_000).toISOString();
  const ids: string[] = [];
  for (const nextFireAt of [farFuture, farFuture, farFuture, undefined]) {
    const started = await request.post("/api/v1/instances", {
      headers,
      data: { sequence_id: sequence.id, tenant_id: slug, namespace: "default", ...(nextFireAt ? { next_fire_at: nextFireAt } : {}) },
    });
    expect(started.status()).toBe(201);
    ids.push(((await started.json()) as { id: string }).id);
  }

  await page.goto("/signin");
  await signIn(page, DEMO_OPERATOR);
  await page.goto("/ops");

  // Both backends, healthy; never a connection string.
  for (const backend of ["primary", "eu-1"]) {
    await expect(rowOf(page, "Storage backends", backend)).toContainText("reachable");
    await expect(rowOf(page, "Storage backends", backend)).toContainText(/\d+(\.\d+)? ms/);
  }
  await expect(page.getByRole("table", { name: "Storage backends", exact: true })).not.toContainText("postgres");

  // The tenant's page, found with the tenants table's search.
  await page.getByRole("searchbox", { name: "Search", exact: true }).fill(slug);
  const row = page.getByRole("table", { name: "Tenants", exact: true }).locator(`tr[data-tenant="${slug}"]`);
  await expect(page.getByRole("region", { name: "Tenants", exact: true }).getByRole("status")).toContainText("1–1 of 1 matching");
  await expect(row.getByRole("cell").nth(1)).toContainText("primary");
  await expect(row.getByRole("cell").nth(1)).toContainText("epoch 1");
  await row.getByRole("link", { name: slug, exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/ops/tenants/${slug}$`));
  const placement = page.getByRole("region", { name: "Placement", exact: true });
  const current = placement.getByLabel("Current placement");
  await expect(current).toContainText("Backend primary · epoch 1 · serving");

  // A stale epoch (the current one, not one newer): the conflict is shown and nothing changes.
  await page.getByText("Advance placement (experts)", { exact: true }).click();
  const advance = page.getByRole("form", { name: `Advance placement of ${slug}`, exact: true });
  await advance.getByRole("combobox", { name: "Backend", exact: true }).selectOption("eu-1");
  await expect(advance.getByRole("spinbutton", { name: "Epoch", exact: true })).toHaveValue("2");
  await advance.getByRole("spinbutton", { name: "Epoch", exact: true }).fill("1");
  await advance.getByRole("button", { name: `Advance placement of ${slug}`, exact: true }).click();
  await advance.getByRole("group", { name: `Confirm: Advance placement of ${slug}`, exact: true }).getByRole("button", { name: "Confirm", exact: true }).click();
  await expect(placement.getByRole("alert")).toContainText("placement epoch 1 is not newer than the current epoch 1");
  await expect(current).toContainText("Backend primary · epoch 1 · serving");

  // The move: confirmed, then watched until done.
  const move = page.getByRole("form", { name: `Move ${slug}`, exact: true });
  await move.getByRole("combobox", { name: "Target backend", exact: true }).selectOption("eu-1");
  await move.getByRole("button", { name: `Start move of ${slug} to eu-1`, exact: true }).click();
  const confirm = move.getByRole("group", { name: `Confirm: Start move of ${slug} to eu-1`, exact: true });
  await expect(confirm).toContainText(`Move ${slug} to eu-1? Its API writes pause while its rows are copied.`);
  await confirm.getByRole("button", { name: "Confirm", exact: true }).click();
  await expect(placement.getByRole("status").filter({ hasText: "Move to eu-1 started" })).toBeVisible();

  // Its moves, on its page: phase by phase until done.
  const moved = page.getByRole("table", { name: "Tenant moves", exact: true }).getByRole("row").filter({ has: page.getByRole("cell", { name: slug, exact: true }) });
  await expect(moved).toContainText("primary → eu-1");
  await expect(moved).toContainText(DEMO_OPERATOR);
  await expect(moved.getByRole("cell").nth(2)).toHaveText("done", { timeout: 30_000 });

  // The placement follows: the new backend at the next epoch, serving again; and the table too.
  await expect(current).toContainText("Backend eu-1 · epoch 2 · serving");
  await page.goto(`/ops?q=${slug}`);
  await expect(row.getByRole("cell").nth(1)).toContainText("eu-1");
  await expect(row.getByRole("cell").nth(1)).toContainText("epoch 2");
  await expect(row.getByRole("cell").nth(1)).not.toContainText("quiesced");

  // Its rows came along: the API (now served from eu-1) still lists every instance.
  await expect(async () => {
    const listed = await request.get("/api/v1/instances?limit=100", { headers });
    expect(listed.status()).toBe(200);
    const { items } = (await listed.json()) as { items: { id: string }[] };
    expect(items.map((i) => i.id).sort()).toEqual([...ids].sort());
  }).toPass({ timeout: 15_000 });
});
