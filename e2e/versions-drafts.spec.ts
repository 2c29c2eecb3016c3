// Versions and drafts in the editor, used as a member would: work survives a reload (from the
// browser's copy and from the server's), leaving with unsaved edits asks first, Save publishes a
// version and says so, two versions are compared side by side (as JSON and on the graph),
// deprecated and deleted, and a sequence with an input schema runs from a form generated from it.
import { expect, test, type Page } from "@playwright/test";
import { createTenantKey, signIn } from "./fixtures.ts";

const outline = (page: Page) => page.getByRole("list", { name: "Blocks" });
const inspector = (page: Page) => page.getByRole("region", { name: "Inspector" });
const saveButton = (page: Page) => page.getByRole("button", { name: "Save", exact: true });
const shot = (page: Page, name: string) => page.screenshot({ path: test.info().outputPath(`${name}.png`), fullPage: true });

/** A new sequence with one noop step, named `name`, not saved. */
async function startSequence(page: Page, name: string) {
  await page.goto("/t/initech/sequences/new");
  await expect(page).toHaveURL(/\/sequences\/new\?draft=[0-9a-f-]{36}$/);
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByRole("button", { name: "Add step" }).click();
  await inspector(page).getByLabel("Handler", { exact: true }).fill("noop");
}

/** Waits for the server's copy of the draft to be written. */
const serverDraftSaved = (page: Page) => page.waitForResponse((r) => r.url().includes("sequenceDrafts.save") && r.ok());

test("a reload mid-edit restores the draft, from the browser's copy and in another browser from the server's; Discard drops it", async ({ page, browser }) => {
  await signIn(page, "member@initech.test");
  const name = `draft-${Date.now()}`;
  const saved = serverDraftSaved(page);
  await startSequence(page, name);
  await saved;
  const address = page.url();

  await page.reload();
  await expect(page.getByText(/^Draft restored from .+\./)).toBeVisible();
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue(name);
  await expect(outline(page).getByRole("button", { name: "step step_1" })).toBeVisible();
  await shot(page, "draft-restored");

  // Another browser has no local copy: the server's is restored.
  const other = await browser.newContext();
  const elsewhere = await other.newPage();
  await signIn(elsewhere, "member@initech.test");
  await elsewhere.goto(address);
  await expect(elsewhere.getByText(/^Draft restored from /)).toBeVisible();
  await expect(elsewhere.getByLabel("Name", { exact: true })).toHaveValue(name);
  await other.close();

  await page.getByRole("button", { name: "Discard draft" }).click();
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue("");
  await expect(outline(page).getByRole("button")).toHaveCount(0);
  await expect(page.getByText(/^Draft restored from /)).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole("button", { name: "Add step" })).toBeVisible();
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue("");
  await expect(page.getByText(/^Draft restored from /)).toHaveCount(0);
});

test("a discard the server never heard of (the page was left first) is not undone by the server's copy, and is sent again", async ({ page, browser }) => {
  await signIn(page, "member@initech.test");
  const saved = serverDraftSaved(page);
  await startSequence(page, `lost-discard-${Date.now()}`);
  await saved;
  const address = page.url();
  await page.reload();
  await expect(page.getByText(/^Draft restored from .+\./)).toBeVisible();

  // The discard never reaches the server: its copy of the draft is still there on reload.
  await page.route(/sequenceDrafts\.discard/, (route) => route.abort());
  await page.getByRole("button", { name: "Discard draft" }).click();
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue("");
  await page.unroute(/sequenceDrafts\.discard/);
  const resent = page.waitForResponse((r) => r.url().includes("sequenceDrafts.discard") && r.ok());
  await page.reload();
  await expect(page.getByRole("button", { name: "Add step" })).toBeVisible();
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue("");
  await expect(page.getByText(/^Draft restored from /)).toHaveCount(0);
  await resent;

  // Sent again on opening: another browser finds no draft either.
  const other = await browser.newContext();
  const elsewhere = await other.newPage();
  await signIn(elsewhere, "member@initech.test");
  await elsewhere.goto(address);
  await expect(elsewhere.getByRole("button", { name: "Add step" })).toBeVisible();
  await expect(elsewhere.getByLabel("Name", { exact: true })).toHaveValue("");
  await expect(elsewhere.getByText(/^Draft restored from /)).toHaveCount(0);
  await other.close();
});

test("edits made before the server's copy has been read are kept too", async ({ page }) => {
  await signIn(page, "member@initech.test");
  // Hold the editor's first read of the server copy until the edits are made.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route(/sequenceDrafts\.get/, async (route) => {
    await held;
    await route.continue();
  });
  const name = `early-${Date.now()}`;
  await startSequence(page, name);
  const saved = serverDraftSaved(page);
  release();
  await saved;
  await page.unroute(/sequenceDrafts\.get/);
  await page.reload();
  await expect(page.getByText(/^Draft restored from /)).toBeVisible();
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue(name);
  await expect(outline(page).getByRole("button", { name: "step step_1" })).toBeVisible();
});

test("leaving with unsaved edits asks first: an in-app link (stay, then leave) and closing the tab", async ({ page }) => {
  await signIn(page, "member@initech.test");
  await startSequence(page, `guard-${Date.now()}`);
  const asked: string[] = [];
  page.once("dialog", async (dialog) => {
    asked.push(`${dialog.type()}: ${dialog.message()}`);
    await dialog.dismiss();
  });
  await page.getByRole("link", { name: "All sequences" }).click();
  await expect.poll(() => asked.length).toBe(1);
  expect(asked[0]).toMatch(/^confirm: You have unsaved changes\. Leave this page\?/);
  // Dismissed: still here, edits in place.
  await expect(page).toHaveURL(/\/sequences\/new\?draft=/);
  await expect(outline(page).getByRole("button", { name: "step step_1" })).toBeVisible();

  page.once("dialog", (dialog) => dialog.accept());
  await page.getByRole("link", { name: "All sequences" }).click();
  await expect(page).toHaveURL(/\/t\/initech\/sequences$/);

  // Back on the draft, the browser's own prompt guards closing the page.
  await page.goBack();
  await expect(page.getByText(/^Draft restored from /)).toBeVisible();
  const unload = new Promise<string>((resolve) => page.once("dialog", (dialog) => (resolve(dialog.type()), void dialog.accept())));
  await page.close({ runBeforeUnload: true });
  expect(await unload).toBe("beforeunload");
});

test("Save publishes v1 then v2, says so and goes disabled until the next change; v1 and v2 compared side by side, then deprecated and deleted", async ({ page }) => {
  await signIn(page, "member@initech.test");
  await startSequence(page, `versions-${Date.now()}`);
  await expect(saveButton(page)).toBeEnabled();
  await saveButton(page).click();
  await expect(page).toHaveURL(/\/t\/initech\/sequences\/[0-9a-f-]{36}$/);
  await expect(page.getByRole("status").filter({ hasText: "Saved v1" })).toBeVisible();
  await expect(saveButton(page)).toBeDisabled();
  await expect(page.getByText("No changes to save")).toBeVisible();

  // An edit enables Save; undoing it disables it again (nothing differs from v1).
  await outline(page).getByRole("button", { name: "step step_1" }).click();
  await page.getByRole("button", { name: "Add step" }).click();
  await inspector(page).getByLabel("Handler", { exact: true }).fill("noop");
  await expect(saveButton(page)).toBeEnabled();
  await expect(page.getByRole("status").filter({ hasText: "Saved v1" })).toHaveCount(0);
  await saveButton(page).click();
  await expect(page.getByRole("status").filter({ hasText: "Saved v2" })).toBeVisible();
  await expect(saveButton(page)).toBeDisabled();
  await expect(page).toHaveURL(/\/t\/initech\/sequences\/[0-9a-f-]{36}$/);
  await shot(page, "saved-v2");

  const versions = page.getByRole("region", { name: "Versions" });
  await expect(versions.getByRole("row")).toHaveCount(3);
  // By default the version before this one, against this one.
  await expect(versions.getByLabel("Left").locator("option:checked")).toHaveText("v1");
  await expect(versions.getByLabel("Right").locator("option:checked")).toHaveText("v2");
  const diff = versions.getByRole("region", { name: "Diff of v1 and v2" });
  const left = diff.getByLabel("Left: v1");
  const right = diff.getByLabel("Right: v2");
  await expect(right).toContainText('"id": "step_2"');
  await expect(left).not.toContainText("step_2");
  // The added block is marked as added on the right, faced by a gap on the left.
  await expect(right.locator(".seq-diff-add", { hasText: '"id": "step_2"' })).toBeVisible();
  await expect(left.locator(".seq-diff-del", { hasText: '"version": 1' })).toBeVisible();
  await expect(right.locator(".seq-diff-add", { hasText: '"version": 2' })).toBeVisible();
  await versions.scrollIntoViewIfNeeded();
  await shot(page, "diff-v1-v2");

  // On the graph: the added block is marked on the right and absent on the left.
  await diff.getByRole("tab", { name: "Graph" }).click();
  const rightGraph = diff.getByRole("group", { name: "Right graph: v2" });
  const leftGraph = diff.getByRole("group", { name: "Left graph: v1" });
  await expect(rightGraph.locator('[data-block-id="step_2"]')).toHaveAttribute("data-change", "added");
  await expect(rightGraph.locator('[data-block-id="step_1"]')).toHaveAttribute("data-change", "same");
  await expect(leftGraph.locator('[data-block-id="step_1"]')).toHaveAttribute("data-change", "same");
  await expect(leftGraph.locator('[data-block-id="step_2"]')).toHaveCount(0);
  await shot(page, "diff-v1-v2-graph");

  await versions.getByRole("button", { name: "Deprecate v1" }).click();
  await expect(versions.getByRole("row", { name: /v1/ }).getByText("deprecated", { exact: true })).toBeVisible();
  await expect(versions.getByRole("button", { name: "Deprecate v1" })).toBeDisabled();
  await versions.getByRole("button", { name: "Delete v1" }).click();
  await versions.getByRole("button", { name: "Confirm" }).click();
  await expect(versions.getByRole("row")).toHaveCount(2);
  await expect(versions.getByRole("row", { name: /v2/ })).toBeVisible();
});

test("Run from a form generated from the input schema: a required field left empty is refused before submitting; then the instance completes live", async ({ page, request }) => {
  const key = await createTenantKey("initech", "versions-drafts-e2e");
  const id = crypto.randomUUID();
  const created = await request.post("/api/v1/sequences", {
    headers: { "x-api-key": key },
    data: {
      id, tenant_id: "initech", namespace: "default", name: `run-form-${Date.now()}`, version: 1, created_at: new Date().toISOString(),
      input_schema: {
        type: "object",
        required: ["customer"],
        properties: { customer: { type: "string", description: "Who to greet" }, count: { type: "integer", minimum: 1 } },
      },
      blocks: [{ type: "step", id: "greet", handler: "log", params: { message: "Hello {{ context.data.customer }}" } }],
    },
  });
  expect(created.status()).toBe(201);

  await signIn(page, "member@initech.test");
  await page.goto(`/t/initech/sequences/${id}`);
  const form = page.getByRole("form", { name: "Run input" });
  await expect(form.getByLabel("customer")).toBeVisible();
  await expect(form.getByLabel("count")).toBeVisible();
  const runs: string[] = [];
  page.on("request", (r) => void (r.url().includes("sequences.run") && runs.push(r.url())));
  await form.getByRole("button", { name: "Run", exact: true }).click();
  await expect(form.getByRole("alert")).toHaveText("Fill in customer: required by the input schema.");
  await shot(page, "run-refused");
  expect(runs).toEqual([]);
  await expect(page).toHaveURL(new RegExp(`/sequences/${id}$`));

  await form.getByLabel("customer").fill("Ada");
  await form.getByLabel("count").fill("2");
  await form.getByRole("button", { name: "Run", exact: true }).click();
  await expect(page).toHaveURL(/\/t\/initech\/instances\/[0-9a-f-]{36}$/);
  await expect(page.getByText("The instance has finished: it takes no more signals.").first()).toBeVisible({ timeout: 20_000 });
  await expect(page.getByRole("region", { name: "Summary" }).getByText("completed", { exact: true })).toBeVisible();
  await shot(page, "run-completed");

  const instanceId = page.url().split("/").at(-1)!;
  const instance = await request.get(`/api/v1/instances/${instanceId}`, { headers: { "x-api-key": key } });
  expect((await instance.json()).context.data).toEqual({ customer: "Ada", count: 2 });
});
