// Tenant settings: an admin creates an API key (its secret shown once), uses it against REST v1,
// revokes it, and the next call is refused; a trigger made in settings starts its sequence from a
// workflow's emit_event step; members cannot open the settings at all.
import { expect, test } from "@playwright/test";
import { randomUUID } from "node:crypto";
import { bulkheadCli, mainText, signIn } from "./fixtures.ts";

test("an API key made in settings works against REST v1 until it is revoked", async ({ page, request }) => {
  await signIn(page, "admin@globex.test");
  await page.goto("/t/globex/settings");
  const name = `e2e-${Date.now()}`;
  await page.getByLabel("Key name").fill(name);
  await page.getByRole("button", { name: "Create key" }).click();
  const secretBox = page.getByLabel("New API key secret", { exact: true });
  await expect(secretBox).toHaveValue(/^bh_/);
  const secret = await secretBox.inputValue();

  const before = await request.get("/api/v1/instances", { headers: { "x-api-key": secret } });
  expect(before.status()).toBe(200);

  // The secret is shown once: after leaving it, the page never shows it again.
  await page.getByRole("button", { name: "Done" }).first().click();
  await expect(page.getByLabel("New API key secret", { exact: true })).toHaveCount(0);
  await expect(page.getByRole("table", { name: "API keys" })).not.toContainText(secret);

  await page.getByRole("button", { name: new RegExp(`^Revoke key ${name}`) }).click();
  await page.getByRole("group", { name: new RegExp(`Confirm: Revoke key ${name}`) }).getByRole("button", { name: "Confirm" }).click();
  await expect(page.getByRole("table", { name: "API keys" }).getByRole("row", { name: new RegExp(name) })).toContainText(/revoked/i);

  const after = await request.get("/api/v1/instances", { headers: { "x-api-key": secret } });
  expect(after.status()).toBe(401);
});

test("a member cannot open the settings pages: the ordinary not-found page", async ({ page }) => {
  await signIn(page, "member@globex.test");
  const settings = await page.goto("/t/globex/settings");
  expect(settings?.status()).toBe(404);
  const refused = await mainText(page);
  const missing = await page.goto("/t/globex/no-such-page");
  expect(missing?.status()).toBe(404);
  expect(await mainText(page)).toBe(refused);
  await page.goto("/t/globex");
  await expect(page.getByRole("link", { name: "Settings", exact: true })).toHaveCount(0);
});

test("a trigger made in settings starts its sequence when a workflow emits it, and can be removed", async ({ page, request }) => {
  await signIn(page, "admin@globex.test");
  await page.goto("/t/globex/settings");
  const triggers = page.getByRole("table", { name: "Triggers" });
  const slug = `welcome-${Date.now()}`;
  const form = page.getByRole("form", { name: "Add a trigger" });
  await form.getByLabel("Slug").fill(slug);
  await form.getByLabel("Sequence").selectOption("welcome-email");
  await form.getByLabel("Type").selectOption("event");
  // An event trigger has no URL, so no secret to sign with.
  await expect(form.getByLabel("Sign with a generated secret")).toHaveCount(0);
  await form.getByRole("button", { name: "Add trigger" }).click();
  const row = triggers.getByRole("row", { name: new RegExp(slug) });
  await expect(row).toContainText("event");
  await expect(row).toContainText("welcome-email latest");
  await expect(row).toContainText("none: emit_event or /fire");
  await expect(page.getByRole("region", { name: `Webhook trigger "${slug}" created` })).toHaveCount(0);

  // A workflow that emits it, started over REST: its child runs welcome-email with the data given.
  const key = (await bulkheadCli("api-keys", "create", "globex", "--name", "trigger-e2e")).trim().split("\n").at(-1)!;
  const headers = { "x-api-key": key };
  const sequence = {
    id: randomUUID(), tenant_id: "globex", namespace: "default", name: `emitter-${Date.now()}`, version: 1, created_at: new Date().toISOString(),
    blocks: [{ type: "step", id: "emit", handler: "emit_event", params: { trigger_slug: slug, data: { name: "Ada" } } }],
  };
  expect((await request.post("/api/v1/sequences", { headers, data: sequence })).status()).toBe(201);
  const started = await request.post("/api/v1/instances", { headers, data: { sequence_id: sequence.id, tenant_id: "globex", namespace: "default" } });
  const { id } = (await started.json()) as { id: string };
  let emitted: { instance_id: string; sequence_name: string } | undefined;
  await expect(async () => {
    const outputs = (await (await request.get(`/api/v1/instances/${id}/outputs`, { headers })).json()) as { block_id: string; output: typeof emitted }[];
    emitted = outputs.find((o) => o.block_id === "emit")?.output;
    expect(emitted).toMatchObject({ sequence_name: "welcome-email" });
  }).toPass({ timeout: 20_000 });
  await page.goto(`/t/globex/instances/${emitted!.instance_id}`);
  await expect(page.getByRole("main")).toContainText("welcome-email");
  await expect(page.getByRole("main")).toContainText("Ada");

  await page.goto("/t/globex/settings");
  await page.getByRole("button", { name: `Remove trigger ${slug}` }).click();
  await page.getByRole("group", { name: new RegExp(`Confirm: Remove trigger ${slug}`) }).getByRole("button", { name: "Confirm" }).click();
  await expect(row).toHaveCount(0);
  expect((await request.get(`/api/v1/triggers/${slug}`, { headers })).status()).toBe(404);
});
