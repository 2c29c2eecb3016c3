// Tenant settings, triggers and webhooks (wire-format L): an admin adds a webhook trigger whose
// generated secret is shown once, with how to sign; a request signed in Node with it starts an
// instance and its replay is refused, both listed as deliveries; a test event sent from the card
// links to the instance it started. A tenant of its own, so the card holds this spec's triggers.
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { expect, test, type Page } from "@playwright/test";
import { E2E_PORT } from "./env.ts";
import { bulkheadCli, createTenantKey, createTestUser, signIn } from "./fixtures.ts";

const ORIGIN = `http://localhost:${E2E_PORT}`;
const PASSWORD = "triggers-e2e";
const SEQUENCE = "order-received";

let tenant: string;
let admin: string;
let key: string;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  tenant = `triggers-${randomBytes(3).toString("hex")}`;
  await bulkheadCli("tenants", "create", tenant, "--name", "Trigger Co");
  admin = await createTestUser(PASSWORD, { tenant, role: "admin" });
  key = await createTenantKey(tenant, "triggers-e2e");
  const created = await fetch(`${ORIGIN}/api/v1/sequences`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({
      id: randomUUID(), tenant_id: tenant, namespace: "default", name: SEQUENCE, version: 1, created_at: new Date().toISOString(),
      blocks: [{ type: "step", id: "note", handler: "log", params: { message: "order {{ context.data.order }}" } }],
    }),
  });
  expect(created.status).toBe(201);
});

const slugFor = (what: string) => `${what}-${randomBytes(4).toString("hex")}`;

/** The headers of one signed webhook request, as the card's instructions describe them. */
function signedHeaders(secret: string, body: string, nonce = randomBytes(16).toString("hex")): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const mac = createHmac("sha256", secret).update(`${timestamp}.${nonce}.${body}`).digest("base64url");
  return { "content-type": "application/json", "x-trigger-timestamp": timestamp, "x-trigger-nonce": nonce, "x-orch8-signature": `v1=${mac}` };
}

/** Adds a webhook trigger through the card's form, signing left on (its default). */
async function addWebhookTrigger(page: Page, slug: string): Promise<void> {
  const form = page.getByRole("form", { name: "Add a trigger" });
  await form.getByLabel("Slug").fill(slug);
  await form.getByLabel("Sequence").selectOption(SEQUENCE);
  await expect(form.getByLabel("Type")).toHaveValue("webhook");
  await expect(form.getByLabel("Sign with a generated secret")).toBeChecked();
  await form.getByRole("button", { name: "Add trigger" }).click();
}

/** Adds an event trigger over REST, for the tests about what every trigger has. */
async function addEventTrigger(slug: string): Promise<void> {
  const created = await fetch(`${ORIGIN}/api/v1/triggers`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ slug, sequence_name: SEQUENCE, trigger_type: "event", tenant_id: tenant }),
  });
  expect(created.status).toBe(201);
}

test("a webhook trigger's generated secret is shown once, with its URL and how to sign, and never again", async ({ page }, testInfo) => {
  const slug = slugFor("orders");
  await signIn(page, admin, PASSWORD);
  await page.goto(`/t/${tenant}/settings`);
  await expect(page.getByRole("region", { name: "Triggers" })).toContainText("No triggers yet");
  await addWebhookTrigger(page, slug);

  const shown = page.getByRole("region", { name: `Webhook trigger "${slug}" created` });
  const url = `${ORIGIN}/api/v1/webhooks/${slug}`;
  await expect(shown.getByRole("textbox", { name: "Webhook URL" })).toHaveValue(url);
  const secretBox = shown.getByRole("textbox", { name: "Signing secret" });
  await expect(secretBox).toHaveValue(/^[A-Za-z0-9_-]{43}$/);
  const secret = await secretBox.inputValue();
  await expect(shown).toContainText("shown only now");
  for (const header of ["x-trigger-timestamp", "x-trigger-nonce", "x-orch8-signature"]) await expect(shown).toContainText(header);
  await expect(shown).toContainText("HMAC-SHA256(secret, timestamp + \".\" + nonce + \".\" + body)");
  const example = shown.getByLabel("Signed request example");
  await expect(example).toContainText(`URL='${url}'`);
  await expect(example).toContainText(`SECRET='${secret}'`);
  await expect(example).toContainText("openssl dgst -sha256 -hmac");
  // Listed already, behind the panel: signed, with its full URL.
  const row = page.getByRole("table", { name: "Triggers" }).getByRole("row", { name: new RegExp(slug) });
  await expect(row).toContainText("webhook");
  await expect(row).toContainText(`${SEQUENCE} latest`);
  await expect(row).toContainText(url);
  await expect(row).toContainText("signed");
  await page.screenshot({ path: testInfo.outputPath("triggers-secret-panel.png"), fullPage: true });

  await shown.getByRole("button", { name: "Done" }).click();
  await expect(shown).toHaveCount(0);
  await expect(row).toBeVisible();
  expect(await page.content()).not.toContain(secret);

  // Nothing the page loads again carries it either: the document (which brings the list's first
  // data, server/web/prefetch.tsx) nor any API answer.
  const answers: string[] = [];
  page.on("response", async (response) => {
    if (response.url().includes("/api/") || response.request().isNavigationRequest()) answers.push(await response.text().catch(() => ""));
  });
  await page.reload();
  await expect(row).toContainText(url);
  await expect(page.getByRole("region", { name: /Webhook trigger .* created/ })).toHaveCount(0);
  expect(await page.content()).not.toContain(secret);
  expect(answers.length).toBeGreaterThan(0);
  for (const text of answers) expect(text).not.toContain(secret);
  await page.screenshot({ path: testInfo.outputPath("triggers-list.png"), fullPage: true });
});

test("a webhook signed with the shown secret starts an instance, its replay is refused, and both are deliveries", async ({ page }, testInfo) => {
  const slug = slugFor("paid");
  await signIn(page, admin, PASSWORD);
  await page.goto(`/t/${tenant}/settings`);
  await addWebhookTrigger(page, slug);
  const shown = page.getByRole("region", { name: `Webhook trigger "${slug}" created` });
  await expect(shown.getByRole("textbox", { name: "Signing secret" })).not.toHaveValue("");
  const url = await shown.getByRole("textbox", { name: "Webhook URL" }).inputValue();
  const secret = await shown.getByRole("textbox", { name: "Signing secret" }).inputValue();
  await shown.getByRole("button", { name: "Done" }).click();

  // From Node, as a vendor would send it: the same bytes signed and sent.
  const body = JSON.stringify({ order: 41, paid: true });
  const headers = signedHeaders(secret, body);
  const accepted = await fetch(url, { method: "POST", headers, body });
  expect(accepted.status).toBe(202);
  const { instance_id: instanceId, trigger } = (await accepted.json()) as { instance_id: string; trigger: string };
  expect(trigger).toBe(slug);
  const replayed = await fetch(url, { method: "POST", headers, body });
  expect(replayed.status).toBe(401);
  expect(await replayed.json()).toEqual({ error: "unauthorized" });

  await page.getByRole("button", { name: `Deliveries of ${slug}` }).click();
  const deliveries = page.getByRole("table", { name: `Deliveries of ${slug}` }).locator("tbody tr");
  // Newest first: the refused replay, then the delivery that started the instance.
  await expect(deliveries).toHaveCount(2);
  await expect(deliveries.nth(0)).toContainText("webhook");
  await expect(deliveries.nth(0)).toContainText("401");
  await expect(deliveries.nth(0)).toContainText("nonce already used");
  await expect(deliveries.nth(0).getByRole("link")).toHaveCount(0);
  await expect(deliveries.nth(1)).toContainText("202");
  await expect(deliveries.nth(1)).toContainText("instance created");
  await expect(deliveries.nth(1).getByRole("link")).toHaveAttribute("href", `/t/${tenant}/instances/${instanceId}`);
  await page.screenshot({ path: testInfo.outputPath("triggers-deliveries.png"), fullPage: true });

  await deliveries.nth(1).getByRole("link").click();
  await expect(page).toHaveURL(`/t/${tenant}/instances/${instanceId}`);
  await expect(page.getByLabel("Instance context as JSON")).toContainText('"order": 41');
});

test("a test event sent from the card starts an instance, linked, and is listed as a delivery", async ({ page }, testInfo) => {
  const slug = slugFor("restock");
  await addEventTrigger(slug);
  await signIn(page, admin, PASSWORD);
  await page.goto(`/t/${tenant}/settings`);
  const row = page.getByRole("table", { name: "Triggers" }).getByRole("row", { name: new RegExp(slug) });
  await expect(row).toContainText("event");
  await page.getByRole("button", { name: `Deliveries of ${slug}` }).click();
  const recent = page.getByRole("region", { name: `Recent deliveries of ${slug}` });
  await expect(recent).toContainText("No deliveries yet");

  await page.getByRole("button", { name: `Send a test event to ${slug}` }).click();
  const form = page.getByRole("form", { name: `Send a test event to ${slug}` });
  const data = form.getByRole("textbox");
  await expect(data).toHaveValue("{}");
  // Checked in the page first: nothing is sent.
  await data.fill("{order: 7}");
  await form.getByRole("button", { name: "Send test event" }).click();
  await expect(form.getByRole("alert")).toContainText("Not valid JSON");
  await expect(data).toHaveAttribute("aria-invalid", "true");
  await expect(recent).toContainText("No deliveries yet");

  await data.fill('{"order": 7}');
  await form.getByRole("button", { name: "Send test event" }).click();
  const started = form.getByRole("status");
  await expect(started).toContainText(`Started instance`);
  await expect(started).toContainText(`of ${SEQUENCE}`);
  await expect(form.getByRole("alert")).toHaveCount(0);
  const href = await started.getByRole("link").getAttribute("href");
  expect(href).toMatch(new RegExp(`^/t/${tenant}/instances/[0-9a-f-]{36}$`));
  // The deliveries below refresh with it.
  const deliveries = page.getByRole("table", { name: `Deliveries of ${slug}` }).locator("tbody tr");
  await expect(deliveries).toHaveCount(1);
  await expect(deliveries.first()).toContainText("test event");
  await expect(deliveries.first()).toContainText("201");
  await expect(deliveries.first()).toContainText("instance created");
  await expect(deliveries.first().getByRole("link")).toHaveAttribute("href", href!);
  await page.screenshot({ path: testInfo.outputPath("triggers-test-event.png"), fullPage: true });

  await started.getByRole("link").click();
  await expect(page).toHaveURL(href!);
  await expect(page.getByRole("heading", { level: 1 })).toContainText(href!.slice(-12));
  await expect(page.getByLabel("Instance context as JSON")).toContainText('"order": 7');
  await expect(page.getByLabel("Instance metadata as JSON")).toContainText(`"_trigger": "${slug}"`);
});

// Settings are for admins (a member gets the not-found page, settings.spec.ts), so the card is
// an admin's; a member's session may still use the read and test-event procedures.
test("a member may list triggers, read deliveries and send test events, but not add or remove", async ({ page }) => {
  const slug = slugFor("member-api");
  await addEventTrigger(slug);
  const member = await createTestUser(PASSWORD, { tenant, role: "member" });
  await signIn(page, member, PASSWORD);
  const query = (path: string, input: unknown) => page.request.get(`/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`);

  const list = await query("triggers.list", { tenantId: tenant });
  expect(list.status()).toBe(200);
  const listed = ((await list.json()) as { result: { data: { slug: string }[] } }).result.data;
  expect(listed.map((t) => t.slug)).toContain(slug);

  const sent = await page.request.post("/api/trpc/triggers.sendTest", { data: { tenantId: tenant, slug, data: { order: 8 } } });
  expect(sent.status()).toBe(200);
  const { instanceId } = ((await sent.json()) as { result: { data: { instanceId: string } } }).result.data;
  const deliveries = await query("triggers.deliveries", { tenantId: tenant, slug });
  expect(((await deliveries.json()) as { result: { data: { source: string; instanceId: string }[] } }).result.data).toEqual([
    expect.objectContaining({ source: "test", instanceId }),
  ]);

  const create = await page.request.post("/api/trpc/triggers.create", {
    data: { tenantId: tenant, slug: slugFor("nope"), sequenceName: SEQUENCE, sequenceVersion: null, triggerType: "event", generateSecret: false },
  });
  expect(create.status()).toBe(404);
  const remove = await page.request.post("/api/trpc/triggers.remove", { data: { tenantId: tenant, slug } });
  expect(remove.status()).toBe(404);
  expect((await query("triggers.list", { tenantId: tenant })).status()).toBe(200);
});
