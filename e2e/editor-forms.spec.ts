// The editor's forms, used as a member would: an http_request step set up entirely through
// controls (no JSON), saved and read back through REST v1 with exactly those fields; template
// autocomplete and the engine's template error; Delete then Ctrl+Z / Ctrl+Shift+Z wherever focus
// is; and a screenshot of the inspector for a step and for every composite block type.
import { expect, test, type Page } from "@playwright/test";
import { createTenantKey, signIn } from "./fixtures.ts";

const outline = (page: Page) => page.getByRole("list", { name: "Blocks" });
const inspector = (page: Page) => page.getByRole("region", { name: "Inspector" });

async function newSequence(page: Page, name: string) {
  await signIn(page, "member@initech.test");
  await page.goto("/t/initech/sequences/new");
  await page.getByLabel("Name", { exact: true }).fill(name);
}

async function keepInspector(page: Page, name: string) {
  // The whole form, not only the part the panel's scroll box shows.
  await inspector(page).evaluate((panel) => (panel.style.maxHeight = "none"));
  const shot = await inspector(page).screenshot({ path: test.info().outputPath(`inspector-${name}.png`) });
  await inspector(page).evaluate((panel) => (panel.style.maxHeight = ""));
  await test.info().attach(`inspector-${name}`, { body: shot, contentType: "image/png" });
}

test("an http_request step set through the form is saved with exactly those fields", async ({ page, request }) => {
  const name = `forms-${Date.now()}`;
  await newSequence(page, name);
  await page.getByRole("button", { name: "Add step" }).click();
  const panel = inspector(page);
  await panel.getByLabel("Handler", { exact: true }).fill("http_request");
  await expect(panel.getByText("One outbound HTTP call")).toBeVisible();

  const params = panel.getByRole("group", { name: "params" });
  const url = params.getByLabel(/^url/);
  // A template root the engine does not know shows the engine's own error...
  await url.fill("https://vendor.test/{{ nope.id }}");
  await expect(params.getByRole("alert")).toHaveText("template error: unknown template root `nope` in `{{ nope.id }}`");
  // ...and autocomplete offers what the engine does know.
  await url.fill("https://vendor.test/orders/{{ con");
  const suggestions = params.getByRole("listbox", { name: "Suggestions" });
  await expect(suggestions.getByRole("option", { name: "context.data.", exact: true })).toBeVisible();
  await url.press("Escape");
  await url.fill("https://vendor.test/orders/{{ context.data.order_id }}");
  await expect(params.getByRole("alert")).toHaveCount(0);
  await params.getByLabel("method").selectOption("POST");

  await panel.getByRole("checkbox", { name: "retry" }).check();
  const retry = panel.getByRole("group", { name: "retry" });
  await retry.getByRole("spinbutton", { name: /^max_attempts/ }).fill("5");
  await retry.getByRole("spinbutton", { name: /^initial_backoff/ }).fill("500");
  await panel.getByLabel("timeout", { exact: true }).fill("10000");
  const when = panel.getByLabel("when", { exact: true });
  await when.fill("data.go ==");
  await expect(panel.getByRole("alert").filter({ hasText: "expression error" })).toBeVisible();
  await when.fill("data.go == true");
  await panel.getByRole("checkbox", { name: "wait_for_input" }).check();
  await panel.getByRole("group", { name: "wait_for_input" }).getByRole("textbox", { name: "prompt" }).fill("Send the order?");
  await panel.getByRole("group", { name: "wait_for_input" }).getByRole("checkbox", { name: "allow_comment" }).check();
  await keepInspector(page, "step-http-request");

  const save = page.getByRole("button", { name: "Save", exact: true });
  await expect(save).toBeEnabled();
  await save.click();
  await expect(page).toHaveURL(/\/t\/initech\/sequences\/[0-9a-f-]{36}$/);

  const key = await createTenantKey("initech", "editor-forms-e2e");
  const rest = await request.get(`/api/v1/sequences/${page.url().split("/").at(-1)}`, { headers: { "x-api-key": key } });
  expect(rest.status()).toBe(200);
  const [step] = (await rest.json()).blocks;
  expect(step).toEqual({
    type: "step",
    id: "step_1",
    handler: "http_request",
    params: { url: "https://vendor.test/orders/{{ context.data.order_id }}", method: "POST" },
    retry: { max_attempts: 5, initial_backoff: 500, max_backoff: 60000, backoff_multiplier: 2 },
    timeout: 10000,
    when: "data.go == true",
    wait_for_input: { prompt: "Send the order?", allow_comment: true },
    // Defaults the wire fills in (A.3), none of them set by the form.
    delay: null,
    cancellable: true,
  });
});

test("Delete, Ctrl+Z and Ctrl+Shift+Z work wherever focus is in the editor, and not while typing", async ({ page }) => {
  await newSequence(page, `keys-${Date.now()}`);
  await page.getByRole("button", { name: "Add step" }).click();
  await inspector(page).getByLabel("Handler", { exact: true }).fill("noop");
  await page.getByRole("button", { name: "Add parallel" }).click();
  const parallel = outline(page).getByRole("button", { name: /^parallel parallel_1/ });
  const focusInEditor = () => page.evaluate(() => document.activeElement?.closest(".seq-editor") !== null);

  // Delete in a text field edits the text, never the block.
  const blockId = inspector(page).getByLabel("Block id");
  await blockId.focus();
  await blockId.press("End");
  await blockId.press("Delete");
  await expect(parallel).toBeVisible();

  await parallel.click();
  await page.keyboard.press("Delete");
  await expect(parallel).toHaveCount(0);
  expect(await focusInEditor()).toBe(true);
  await page.keyboard.press("Control+z");
  await expect(parallel).toBeVisible();
  expect(await focusInEditor()).toBe(true);
  await page.keyboard.press("Control+Shift+z");
  await expect(parallel).toHaveCount(0);
  await page.keyboard.press("Control+z");
  await expect(parallel).toBeVisible();

  // The same from the Delete button, which goes away with its block.
  await parallel.click();
  await inspector(page).getByRole("button", { name: "Delete block" }).click();
  await expect(parallel).toHaveCount(0);
  expect(await focusInEditor()).toBe(true);
  await page.keyboard.press("Control+z");
  await expect(parallel).toBeVisible();
  await expect(outline(page).getByRole("button", { name: /^step step_1/ })).toBeVisible();
});

test("every composite block type has its fields in the inspector (screenshots kept)", async ({ page }) => {
  await newSequence(page, `types-${Date.now()}`);
  const types = ["parallel", "race", "loop", "for_each", "router", "try_catch", "sub_sequence", "a_b_split", "cancellation_scope", "saga"];
  const fields: Record<string, string[]> = {
    race: ["semantics"],
    loop: ["condition", "max_iterations", "break_on", "continue_on_error", "poll_interval", "retain_iterations"],
    for_each: ["collection", "item_var", "max_iterations", "retain_iterations"],
    router: ["Route 1 condition", "Has a default branch"],
    try_catch: ["Has a finally block"],
    sub_sequence: ["sequence_name", "version"],
    a_b_split: ["Variant 1 name", "Variant 1 weight"],
  };
  for (const type of types) {
    await page.getByRole("button", { name: `Add ${type}`, exact: true }).click();
    await expect(inspector(page).getByRole("heading", { level: 3 })).toContainText(type);
    // Required fields are labelled "name *".
    for (const label of fields[type] ?? []) await expect(inspector(page).getByLabel(new RegExp(`^\\s*${label}( \\*)?$`)).first()).toBeVisible();
    await keepInspector(page, type);
  }
  // A saga step: its id, its action's and its compensation's types; the action is drawn on the canvas.
  await inspector(page).getByRole("button", { name: "Add saga step" }).click();
  const sagaStep = inspector(page).getByRole("group", { name: "Saga step 1" });
  await expect(sagaStep.getByRole("textbox", { name: "Step 1 id" })).toHaveValue("saga_step_1");
  await expect(sagaStep.getByRole("combobox", { name: "Step 1 action" })).toHaveValue("step");
  await expect(sagaStep.getByRole("combobox", { name: "Step 1 compensation" })).toHaveValue("");
  await keepInspector(page, "saga-with-step");
  // The outline names the arm each nested block sits in.
  await outline(page).getByRole("button", { name: /^try_catch try_catch_1/ }).click();
  await outline(page).getByRole("button", { name: "empty catch of try_catch_1" }).click();
  await page.getByRole("button", { name: "Add step" }).click();
  // step_1 is the saga step's action.
  await expect(outline(page).getByRole("button", { name: /^step step_2 · catch/ })).toBeVisible();
  await page.screenshot({ path: test.info().outputPath("editor-all-types.png"), fullPage: true });
});
