// The visual editor, used as a member would: build a sequence from the palette and the
// inspector only, save it, run it and watch it complete; an invalid block shows its error and
// blocks Save; the saved sequence's JSON view equals what REST v1 answers for it.
import { expect, test, type Page } from "@playwright/test";
import { bulkheadCli, signIn } from "./fixtures.ts";

const outline = (page: Page) => page.getByRole("list", { name: "Blocks" });
const inspector = (page: Page) => page.getByRole("region", { name: "Inspector" });

async function logStep(page: Page, slot: string, message: string) {
  await outline(page).getByRole("button", { name: slot }).click();
  await page.getByRole("button", { name: "Add step" }).click();
  await inspector(page).getByLabel("Handler", { exact: true }).fill("log");
  // log is built in: its params have a form (message as text).
  await inspector(page).getByRole("group", { name: "params" }).getByRole("combobox", { name: "message", exact: true }).fill(message);
}

test("a member builds a parallel of two log steps and a router in the editor, saves, runs it and sees it complete", async ({ page, request }) => {
  await signIn(page, "member@initech.test");
  await page.goto("/t/initech/sequences/new");
  const name = `editor-${Date.now()}`;
  await page.getByLabel("Name", { exact: true }).fill(name);

  await page.getByRole("button", { name: "Add parallel" }).click();
  await logStep(page, "empty branch 1 of parallel_1", "left");
  await logStep(page, "empty branch 2 of parallel_1", "right");
  await outline(page).getByRole("button", { name: /^parallel parallel_1/ }).click();
  await page.getByRole("button", { name: "Add router" }).click();
  await inspector(page).getByLabel("Has a default branch").check();

  const save = page.getByRole("button", { name: "Save", exact: true });
  await expect(save).toBeEnabled();
  // Screenshots of the main pages are kept as test artifacts (test-results/).
  await page.screenshot({ path: test.info().outputPath("editor.png"), fullPage: true });
  await save.click();
  await expect(page).toHaveURL(/\/t\/initech\/sequences\/[0-9a-f-]{36}$/);

  // The JSON view of the saved sequence is what REST v1 answers for it.
  const sequenceId = page.url().split("/").at(-1)!;
  const key = (await bulkheadCli("api-keys", "create", "initech", "--name", "editor-e2e")).trim().split("\n").at(-1)!;
  const rest = await request.get(`/api/v1/sequences/${sequenceId}`, { headers: { "x-api-key": key } });
  expect(rest.status()).toBe(200);
  await page.getByRole("tab", { name: "JSON" }).click();
  const shown = JSON.parse(await page.getByRole("tabpanel", { name: "JSON" }).getByRole("textbox").inputValue());
  expect(shown).toEqual(await rest.json());
  await page.getByRole("tab", { name: "Canvas" }).click();

  await page.getByLabel("Input context data (JSON)").fill("{}");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await expect(page).toHaveURL(/\/t\/initech\/instances\/[0-9a-f-]{36}$/);
  await expect(page.getByText("The instance has finished: it takes no more signals.").first()).toBeVisible({ timeout: 20_000 });
  await expect(page.getByRole("region", { name: "Summary" }).getByText("completed", { exact: true })).toBeVisible();
  await expect(page.getByText("Output of step_1")).toBeVisible();
  await expect(page.getByText("Output of step_2")).toBeVisible();
  await page.screenshot({ path: test.info().outputPath("instance-detail.png"), fullPage: true });

  await page.goto("/t/initech");
  await expect(page.getByRole("heading", { name: "Throughput, last hour" })).toBeVisible();
  await page.screenshot({ path: test.info().outputPath("overview.png"), fullPage: true });
});

test("a step without a handler shows its error on the block and Save is disabled", async ({ page }) => {
  await signIn(page, "member@acme.test");
  await page.goto("/t/acme/sequences/new");
  await page.getByLabel("Name", { exact: true }).fill("broken");
  await page.getByRole("button", { name: "Add step" }).click();
  await expect(outline(page).getByRole("button", { name: /^step step_1 ⚠/ })).toBeVisible();
  await expect(inspector(page)).toContainText("handler");
  await expect(page.getByRole("button", { name: "Save", exact: true })).toBeDisabled();
  await inspector(page).getByLabel("Handler", { exact: true }).fill("noop");
  await expect(page.getByRole("button", { name: "Save", exact: true })).toBeEnabled();
});

test("the canvas draws the execution order: a step, a parallel, a try_catch after it, a step", async ({ page }) => {
  await signIn(page, "member@initech.test");
  await page.goto("/t/initech/sequences/new");
  await page.getByLabel("Name", { exact: true }).fill(`order-${Date.now()}`);
  const canvas = page.locator(".seq-canvas");
  const handler = async () => inspector(page).getByLabel("Handler", { exact: true }).fill("noop");
  const addInto = async (slot: string, type: string) => {
    await canvas.locator(`[data-slot="${slot}"]`).click();
    await page.getByRole("button", { name: `Add ${type}` }).click();
  };

  // Built on the canvas: each composite's arms through their empty slots, the next block through the slot after it.
  await page.getByRole("button", { name: "Add step" }).click();
  await handler();
  await page.getByRole("button", { name: "Add parallel" }).click();
  await addInto("branch 1", "step");
  await handler();
  await addInto("branch 2", "step");
  await handler();
  await canvas.locator('[data-after="parallel_1"]').click();
  await expect(page.getByText("Adds after parallel_1.")).toBeVisible();
  await page.getByRole("button", { name: "Add try_catch" }).click();
  await addInto("try", "step");
  await handler();
  await addInto("catch", "step");
  await handler();
  await canvas.locator('[data-after="try_catch_1"]').click();
  await page.getByRole("button", { name: "Add step" }).click();
  await handler();
  await expect(page.getByRole("button", { name: "Save", exact: true })).toBeEnabled();

  // The tree is what was meant: the try_catch is a top-level block after the parallel, not a third branch.
  const outlineText = await outline(page).innerText();
  expect(outlineText.split("\n").map((line) => line.trim())).toEqual([
    // Nested blocks say which arm they sit in.
    "step step_1", "parallel parallel_1", "step step_2 · branch 1", "step step_3 · branch 2", "try_catch try_catch_1", "step step_4 · try", "step step_5 · catch", "step step_6",
  ]);

  const box = async (selector: string) => {
    const found = await canvas.locator(selector).boundingBox();
    if (!found) throw new Error(`${selector} is not drawn`);
    return { ...found, bottom: found.y + found.height, right: found.x + found.width };
  };
  const block = (id: string) => box(`[data-block-id="${id}"]`);
  const [start, fan, left, right, guard, attempt, recover, end] = await Promise.all(
    ["step_1", "parallel_1", "step_2", "step_3", "try_catch_1", "step_4", "step_5", "step_6"].map(block),
  );
  const fanJoin = await box('[data-join-of="parallel_1"]');
  const guardJoin = await box('[data-join-of="try_catch_1"]');
  // Top to bottom in execution order; after a composite, below its join.
  expect(fan!.y).toBeGreaterThan(start!.bottom);
  expect(left!.y).toBeGreaterThan(fan!.bottom);
  expect(fanJoin.y).toBeGreaterThan(Math.max(left!.bottom, right!.bottom));
  expect(guard!.y).toBeGreaterThan(fanJoin.bottom);
  expect(attempt!.y).toBeGreaterThan(guard!.bottom);
  expect(guardJoin.y).toBeGreaterThan(Math.max(attempt!.bottom, recover!.bottom));
  expect(end!.y).toBeGreaterThan(guardJoin.bottom);
  // Arms left to right in their order, and labelled so.
  expect(left!.right).toBeLessThan(right!.x);
  expect(attempt!.right).toBeLessThan(recover!.x);
  const label = (text: string) => box(`.seq-edge-label >> text="${text}"`);
  expect((await label("branch 1")).right).toBeLessThan((await label("branch 2")).x);
  expect((await label("try")).right).toBeLessThan((await label("catch")).x);
  // The try_catch is on the main line, not beside the parallel's branches.
  expect(guard!.x).toBeCloseTo(start!.x, 0);
  // No finally was asked for: none is drawn, nor offered in the outline.
  await expect(page.getByText(/empty finally/)).toHaveCount(0);
  await expect(page.locator(".seq-edge-label", { hasText: "finally" })).toHaveCount(0);
  await canvas.screenshot({ path: test.info().outputPath("canvas-execution-order.png") });

  // An empty-but-present finally shows as one slot, in the third place.
  await canvas.locator('[data-block-id="try_catch_1"]').click();
  await inspector(page).getByLabel("Has a finally block").check();
  const slot = await box('[data-slot="finally"]');
  expect(slot.x).toBeGreaterThan((await block("step_5")).right);
  await expect(canvas.getByText(/empty finally/)).toHaveCount(1);
});

const call = (id: string, handler = "noop") => ({ type: "step", id, handler, params: null });
/** Every block type, composites nested, with arms of every kind (an empty one, a finally, a default). */
const EVERY_TYPE = [
  call("start", "http_request"),
  {
    type: "for_each", id: "each_order", collection: "orders", item_var: "order",
    body: [{ type: "try_catch", id: "charge_guard", try_block: [call("charge")], catch_block: [call("refund_note")], finally_block: [call("audit")] }],
  },
  { type: "race", id: "fastest", semantics: "first_to_succeed", branches: [[call("mirror_a")], [], [call("mirror_c")]] },
  {
    type: "router", id: "route_size",
    routes: [{ condition: "data.total > 100", blocks: [call("big_order")] }, { condition: "data.vip", blocks: [] }],
    default: [call("small_order")],
  },
  { type: "a_b_split", id: "email_test", variants: [{ name: "plain", weight: 50, blocks: [call("send_plain")] }, { name: "fancy", weight: 50, blocks: [call("send_fancy")] }] },
  { type: "cancellation_scope", id: "shielded", blocks: [{ type: "sub_sequence", id: "ship", sequence_name: "shipping", input: null }] },
  {
    type: "saga", id: "booking",
    steps: [
      { id: "book_hotel", action: call("reserve_hotel"), compensation: call("cancel_hotel") },
      { id: "notify", action: call("send_confirmation") },
    ],
  },
  { type: "loop", id: "poll", condition: "!data.done", max_iterations: 10, body: [{ type: "parallel", id: "checks", branches: [[call("check_a")], [call("check_b"), call("check_b2")]] }] },
  call("finish", "log"),
];

test("every block type is drawn in execution order, without overlaps (screenshot kept)", async ({ page }) => {
  await signIn(page, "member@acme.test");
  await page.goto("/t/acme/sequences/new");
  // A larger canvas for the kept screenshot (the fit happens when the blocks arrive).
  await page.addStyleTag({ content: ".seq-workspace { grid-template-columns: minmax(0, 1fr); } .seq-canvas { height: 2400px; }" });
  await page.getByRole("tab", { name: "JSON" }).click();
  const json = page.getByRole("tabpanel", { name: "JSON" }).getByRole("textbox");
  await json.fill(JSON.stringify({ ...JSON.parse(await json.inputValue()), name: "every-type", blocks: EVERY_TYPE }));
  await page.getByRole("button", { name: "Apply JSON" }).click();
  await page.getByRole("tab", { name: "Canvas" }).click();
  const canvas = page.locator(".seq-canvas");
  await expect(canvas.locator("[data-block-id]")).toHaveCount(27);

  const boxes = await canvas.locator("[data-block-id]").evaluateAll((nodes) =>
    nodes.map((node) => {
      const r = node.getBoundingClientRect();
      return { id: node.getAttribute("data-block-id")!, x: r.x, y: r.y, right: r.right, bottom: r.bottom };
    }),
  );
  const at = new Map(boxes.map((b) => [b.id, b]));
  for (const a of boxes)
    for (const b of boxes) {
      if (a.id >= b.id) continue;
      const apart = a.right <= b.x || b.right <= a.x || a.bottom <= b.y || b.bottom <= a.y;
      expect(apart, `${a.id} overlaps ${b.id}`).toBe(true);
    }
  // The top-level blocks, top to bottom in order.
  const top = ["start", "each_order", "fastest", "route_size", "email_test", "shielded", "booking", "poll", "finish"].map((id) => at.get(id)!);
  for (let i = 1; i < top.length; i++) expect(top[i]!.y, top[i]!.id).toBeGreaterThan(top[i - 1]!.bottom);
  // Arms left to right: try, catch, finally; routes then default; variants; saga compensation to the right.
  const leftToRight = (...ids: string[]) => ids.forEach((id, i) => i > 0 && expect(at.get(id)!.x, id).toBeGreaterThan(at.get(ids[i - 1]!)!.right));
  leftToRight("charge", "refund_note", "audit");
  leftToRight("mirror_a", "mirror_c");
  leftToRight("big_order", "small_order");
  leftToRight("send_plain", "send_fancy");
  leftToRight("reserve_hotel", "cancel_hotel");
  leftToRight("check_a", "check_b");
  // A loop's body is inside its frame, the next block below the frame.
  const frame = await canvas.locator('[data-frame-of="poll"]').boundingBox();
  const check = at.get("check_b2")!;
  expect(check.bottom).toBeLessThan(frame!.y + frame!.height);
  expect(at.get("finish")!.y).toBeGreaterThan(frame!.y + frame!.height);
  await canvas.screenshot({ path: test.info().outputPath("canvas-every-block-type.png") });
});
