// The fields that were JSON-only, set through controls and read back over REST v1 exactly as set:
// a step's output_schema, saga steps, the sequence's input_schema, sla and interceptors, and an
// on_failure cleanup tree built on the canvas. Also the "+" before a tree's first block, a palette
// block dropped onto a block (it goes after it) and a block dragged onto another (it moves there),
// each drop target highlighted while something is held over it.
import { expect, test, type Locator, type Page } from "@playwright/test";
import { createTenantKey, signIn } from "./fixtures.ts";
import { holdPaletteBlockOver } from "./palette-drag.ts";

test.use({ viewport: { width: 1280, height: 1200 } });

const outline = (page: Page) => page.getByRole("list", { name: "Blocks" });
const inspector = (page: Page) => page.getByRole("region", { name: "Inspector" });
const outlineLines = async (page: Page) => (await outline(page).innerText()).split("\n").map((line) => line.replace(" ⚠", "").trim()).filter(Boolean);
const palette = (page: Page, type: string) => page.getByRole("button", { name: `Add ${type}`, exact: true });
/** Clicks an empty part of the canvas: nothing selected, the inspector shows the sequence's own fields. */
const selectNothing = async (page: Page) => {
  await page.locator(".seq-canvas .react-flow__pane").click({ position: { x: 8, y: 8 } });
  await expect(inspector(page).getByRole("group", { name: "Sequence settings" })).toBeVisible();
};

/** The whole inspector, not only what its scroll box shows, kept with the report. */
async function keepPanel(page: Page, name: string) {
  await inspector(page).evaluate((panel) => (panel.style.maxHeight = "none"));
  const shot = await inspector(page).screenshot({ path: test.info().outputPath(`${name}.png`) });
  await inspector(page).evaluate((panel) => (panel.style.maxHeight = ""));
  await test.info().attach(name, { body: shot, contentType: "image/png" });
}

test("output_schema, saga steps, input_schema, sla, interceptors and on_failure set without JSON are saved as set", async ({ page, request }) => {
  // Some forty form entries, a save and a REST read: about 25 s alone, past the 30 s default on a loaded machine.
  test.slow();
  await signIn(page, "member@initech.test");
  await page.goto("/t/initech/sequences/new");
  await page.getByLabel("Name", { exact: true }).fill(`fields-${Date.now()}`);
  const panel = inspector(page);

  // A step whose output must be {ok: boolean}.
  await palette(page, "step").click();
  await panel.getByLabel("Handler", { exact: true }).fill("noop");
  await panel.getByRole("checkbox", { name: "output_schema" }).check();
  const output = panel.getByRole("group", { name: "output_schema" });
  await output.getByRole("button", { name: "Add property to output_schema" }).click();
  await output.getByRole("textbox", { name: "output_schema property 1 name" }).fill("ok");
  await output.getByRole("combobox", { name: "output_schema property 1 type" }).selectOption("boolean");
  await output.getByRole("checkbox", { name: "required" }).check();
  await keepPanel(page, "inspector-step-output-schema");

  // A saga after it: one step, its action a step, its compensation a step, each given a handler.
  await palette(page, "saga").click();
  await panel.getByRole("button", { name: "Add saga step" }).click();
  await panel.getByRole("textbox", { name: "Step 1 id" }).fill("reserve");
  await panel.getByRole("combobox", { name: "Step 1 compensation" }).selectOption("step");
  await outline(page).getByRole("button", { name: "step step_2 · step reserve action" }).click();
  // A saga's action is not in a list: the palette adds after its saga, and deleting it deletes its saga step.
  await expect(page.getByText("Adds after saga_1.")).toBeVisible();
  await expect(panel.getByRole("button", { name: "Delete saga step" })).toBeVisible();
  await panel.getByLabel("Handler", { exact: true }).fill("log");
  await page.locator('.seq-canvas [data-block-id="step_3"]').click();
  await expect(panel.getByRole("heading", { level: 3 })).toHaveText("step step_3");
  await panel.getByLabel("Handler", { exact: true }).fill("noop");

  // The sequence's own fields.
  await selectNothing(page);
  const settings = panel.getByRole("group", { name: "Sequence settings" });
  await settings.getByRole("checkbox", { name: "input_schema" }).check();
  const input = settings.getByRole("group", { name: "input_schema" });
  await input.getByRole("button", { name: "Add property to input_schema" }).click();
  await input.getByRole("textbox", { name: "input_schema property 1 name" }).fill("email");
  await input.getByRole("checkbox", { name: "required" }).check();
  await input.getByRole("button", { name: "Add property to input_schema" }).click();
  await input.getByRole("combobox", { name: "input_schema property 2 type" }).selectOption("integer");
  await settings.getByRole("checkbox", { name: "sla" }).check();
  await settings.getByRole("spinbutton", { name: "max_runtime" }).fill("60000");
  await settings.getByRole("checkbox", { name: "interceptors" }).check();
  await settings.getByRole("checkbox", { name: "before_step" }).check();
  await settings.getByRole("group", { name: "before_step" }).getByLabel(/^handler/).fill("log");
  await keepPanel(page, "inspector-sequence-settings");
  await settings.getByRole("checkbox", { name: /^on_failure:/ }).check();

  // Checking on_failure shows its tree: an empty one, filled from the palette like the main tree.
  await expect(page.getByRole("tab", { name: "on_failure" })).toHaveAttribute("aria-selected", "true");
  await expect(page.locator('.seq-canvas [data-slot="on_failure"]')).toBeVisible();
  await palette(page, "step").click();
  await panel.getByLabel("Handler", { exact: true }).fill("log");
  expect(await outlineLines(page)).toEqual(["step step_4"]);
  await page.getByRole("tab", { name: "Main" }).click();
  expect(await outlineLines(page)).toEqual(["step step_1", "saga saga_1", "step step_2 · step reserve action", "step step_3 · step reserve compensation"]);
  await page.locator(".seq-canvas").screenshot({ path: test.info().outputPath("fields-main-tree.png") });

  const save = page.getByRole("button", { name: "Save", exact: true });
  await expect(save).toBeEnabled();
  await save.click();
  await expect(page).toHaveURL(/\/t\/initech\/sequences\/[0-9a-f-]{36}$/);
  const key = await createTenantKey("initech", "editor-fields-e2e");
  const rest = await request.get(`/api/v1/sequences/${page.url().split("/").at(-1)}`, { headers: { "x-api-key": key } });
  expect(rest.status()).toBe(200);
  const sequence = await rest.json();
  expect(sequence.blocks[0].output_schema).toEqual({ type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] });
  expect(sequence.blocks[1].steps).toMatchObject([
    { id: "reserve", action: { type: "step", id: "step_2", handler: "log" }, compensation: { type: "step", id: "step_3", handler: "noop" } },
  ]);
  expect(sequence.input_schema).toEqual({ type: "object", properties: { email: { type: "string" }, field1: { type: "integer" } }, required: ["email"] });
  expect(sequence.sla).toEqual({ max_runtime: 60000 });
  expect(sequence.interceptors).toEqual({ before_step: { handler: "log", params: null } });
  expect(sequence.on_failure).toMatchObject([{ type: "step", id: "step_4", handler: "log" }]);
});

const center = async (locator: Locator) => {
  const box = (await locator.boundingBox())!;
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
};

test("a + before the first block, a palette block dropped on a block, and a block dragged onto another", async ({ page }) => {
  await signIn(page, "member@initech.test");
  await page.goto("/t/initech/sequences/new");
  await page.getByLabel("Name", { exact: true }).fill(`drop-${Date.now()}`);
  const canvas = page.locator(".seq-canvas");
  await palette(page, "step").click();
  await inspector(page).getByLabel("Handler", { exact: true }).fill("noop");
  await palette(page, "parallel").click();

  // The + above the first block puts a block at the very top.
  await canvas.getByRole("button", { name: "Add a block before step_1" }).click();
  await expect(page.getByText("Adds before step_1.")).toBeVisible();
  await palette(page, "step").click();
  await inspector(page).getByLabel("Handler", { exact: true }).fill("noop");
  expect((await outlineLines(page)).filter((line) => !line.startsWith("empty"))).toEqual(["step step_2", "step step_1", "parallel parallel_1"]);

  // A palette block held over step_2 highlights it, and dropped there goes right after it.
  const step2 = canvas.locator('[data-block-id="step_2"]');
  const held = await holdPaletteBlockOver(page, palette(page, "sub_sequence"), step2);
  await expect(step2).toHaveAttribute("data-drop", "over");
  await expect(canvas.locator("[data-drop]")).toHaveCount(1);
  await canvas.screenshot({ path: test.info().outputPath("palette-drop-target.png") });
  await held.leave();
  await expect(canvas.locator("[data-drop]")).toHaveCount(0);
  await palette(page, "sub_sequence").dragTo(step2);
  expect((await outlineLines(page)).filter((line) => !line.startsWith("empty"))).toEqual(["step step_2", "sub_sequence sub_sequence_1", "step step_1", "parallel parallel_1"]);
  await expect(inspector(page).getByRole("heading", { level: 3 })).toHaveText("sub_sequence sub_sequence_1");

  // step_2 dragged onto the parallel moves to after it (drawn below its join).
  const from = await center(canvas.locator('[data-block-id="step_2"]'));
  const to = await center(canvas.locator('[data-block-id="parallel_1"]'));
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(from.x + 10, from.y + 10, { steps: 4 });
  await page.mouse.move(to.x, to.y, { steps: 12 });
  // The block it would be dropped on is highlighted while it is held there.
  await expect(canvas.locator('[data-block-id="parallel_1"]')).toHaveAttribute("data-drop", "over");
  await canvas.screenshot({ path: test.info().outputPath("move-drop-target.png") });
  await page.mouse.up();
  await expect(canvas.locator("[data-drop]")).toHaveCount(0);
  await expect
    .poll(async () => (await outlineLines(page)).filter((line) => !line.startsWith("empty")))
    .toEqual(["sub_sequence sub_sequence_1", "step step_1", "parallel parallel_1", "step step_2"]);
  const join = (await canvas.locator('[data-join-of="parallel_1"]').boundingBox())!;
  expect((await canvas.locator('[data-block-id="step_2"]').boundingBox())!.y).toBeGreaterThan(join.y + join.height);
  await canvas.screenshot({ path: test.info().outputPath("dropped-and-moved.png") });
});

test("a worker's params and a sub_sequence's input are built as values, without JSON", async ({ page }) => {
  await signIn(page, "member@initech.test");
  await page.goto("/t/initech/sequences/new");
  await page.getByLabel("Name", { exact: true }).fill(`values-${Date.now()}`);
  const panel = inspector(page);
  await palette(page, "step").click();
  await panel.getByLabel("Handler", { exact: true }).fill("acme.charge");
  await expect(panel.getByText("Not built in: runs as an external worker task.")).toBeVisible();
  const params = panel.getByRole("group", { name: "params" });
  await params.getByRole("combobox", { name: "params: kind" }).selectOption("object");
  await params.getByRole("button", { name: "Add to params" }).click();
  await params.getByRole("textbox", { name: "params name 1" }).fill("amount");
  await params.getByRole("combobox", { name: "params.amount: kind" }).selectOption("number");
  await params.getByRole("spinbutton", { name: "params.amount" }).fill("42.5");
  await params.getByRole("button", { name: "Add to params" }).click();
  await params.getByRole("textbox", { name: "params name 2" }).fill("customer");
  await params.getByRole("combobox", { name: "params.customer", exact: true }).fill("{{ context.data.customer_id }}");
  await params.getByRole("button", { name: "Add to params" }).click();
  await params.getByRole("textbox", { name: "params name 3" }).fill("tags");
  await params.getByRole("combobox", { name: "params.tags: kind" }).selectOption("list");
  await params.getByRole("button", { name: "Add to params.tags" }).click();
  await params.getByRole("combobox", { name: "params.tags[0]", exact: true }).fill("vip");
  await keepPanel(page, "inspector-worker-params");

  await palette(page, "sub_sequence").click();
  await panel.getByRole("textbox", { name: /^sequence_name/ }).fill("shipping");
  await panel.getByRole("combobox", { name: "input: kind" }).selectOption("object");
  await panel.getByRole("button", { name: "Add to input" }).click();
  await panel.getByRole("combobox", { name: "input.key1: kind" }).selectOption("boolean");
  await panel.getByRole("checkbox", { name: "input.key1 is true" }).check();

  await page.getByRole("tab", { name: "JSON" }).click();
  const doc = JSON.parse(await page.getByRole("tabpanel", { name: "JSON" }).getByRole("textbox").inputValue());
  expect(doc.blocks[0].params).toEqual({ amount: 42.5, customer: "{{ context.data.customer_id }}", tags: ["vip"] });
  expect(doc.blocks[1]).toMatchObject({ type: "sub_sequence", sequence_name: "shipping", input: { key1: true } });
});
