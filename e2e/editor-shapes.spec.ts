// The canvas for each block type of wire-format A.2, one at a time between a step before and a
// step after (a try_catch both with and without a finally), and the cleanup trees: a screenshot of
// each is kept (attached to the report), and what matters in it is asserted from the drawn boxes:
// the successor below, arms left to right in their order, the words on the arms, no arm that is
// not in the JSON, and nothing drawn over anything else.
import { expect, test, type Locator, type Page } from "@playwright/test";
import { signIn } from "./fixtures.ts";

const call = (id: string) => ({ type: "step", id, handler: "noop", params: null });

interface Shape {
  block: Record<string, unknown>;
  /** Block ids of the arms' first blocks, in declaration order: drawn left to right. */
  arms?: string[];
  /** The words on the arms, left to right. */
  labels?: string[];
  /** Blocks of one list, top to bottom. */
  column?: string[];
  /** Arm words that must not be drawn (no phantom arm). */
  absent?: string[];
}

const SHAPES: Record<string, Shape> = {
  step: { block: { ...call("work"), handler: "http_request", params: { url: "https://example.test" } } },
  parallel: {
    block: { type: "parallel", id: "fan", branches: [[call("left")], [call("middle")], [call("right")]] },
    arms: ["left", "middle", "right"],
    labels: ["branch 1", "branch 2", "branch 3"],
  },
  race: {
    block: { type: "race", id: "fastest", semantics: "first_to_succeed", branches: [[call("mirror_a")], [call("mirror_b")]] },
    arms: ["mirror_a", "mirror_b"],
    labels: ["branch 1", "branch 2"],
  },
  loop: { block: { type: "loop", id: "poll", condition: "!data.done", max_iterations: 10, body: [call("check"), call("wait")] }, column: ["poll", "check", "wait"], labels: ["↻"] },
  for_each: { block: { type: "for_each", id: "each_order", collection: "orders", item_var: "order", body: [call("charge")] }, column: ["each_order", "charge"], labels: ["↻"] },
  router: {
    block: {
      type: "router", id: "by_tier",
      routes: [{ condition: 'data.tier == "gold"', blocks: [call("gold")] }, { condition: "data.vip", blocks: [call("vip")] }],
      default: [call("standard")],
    },
    arms: ["gold", "vip", "standard"],
    labels: ['route 1: data.tier == "gold"', "route 2: data.vip", "default"],
  },
  try_catch: {
    block: { type: "try_catch", id: "guard", try_block: [call("attempt")], catch_block: [call("recover")], finally_block: [call("tidy")] },
    arms: ["attempt", "recover", "tidy"],
    labels: ["try", "catch", "finally"],
  },
  try_catch_no_finally: {
    block: { type: "try_catch", id: "guard", try_block: [call("attempt")], catch_block: [call("recover")] },
    arms: ["attempt", "recover"],
    labels: ["try", "catch"],
    absent: ["finally"],
  },
  sub_sequence: { block: { type: "sub_sequence", id: "ship", sequence_name: "shipping", version: 2, input: null } },
  a_b_split: {
    block: { type: "a_b_split", id: "email_test", variants: [{ name: "plain", weight: 50, blocks: [call("send_plain")] }, { name: "fancy", weight: 50, blocks: [call("send_fancy")] }] },
    arms: ["send_plain", "send_fancy"],
    labels: ["variant plain", "variant fancy"],
  },
  cancellation_scope: { block: { type: "cancellation_scope", id: "shielded", blocks: [call("pay"), call("ship_it")] }, column: ["shielded", "pay", "ship_it"] },
  saga: {
    block: {
      type: "saga", id: "booking",
      steps: [
        { id: "book_hotel", action: call("reserve_hotel"), compensation: call("cancel_hotel") },
        { id: "notify", action: call("send_confirmation") },
      ],
    },
    // An action, then its compensation to its right.
    arms: ["reserve_hotel", "cancel_hotel"],
    column: ["booking", "reserve_hotel", "send_confirmation"],
    labels: ["compensation"],
  },
};

async function openWith(page: Page, name: string, blocks: unknown[]) {
  await page.goto("/t/acme/sequences/new");
  await page.getByRole("tab", { name: "JSON" }).click();
  const json = page.getByRole("tabpanel", { name: "JSON" }).getByRole("textbox");
  await json.fill(JSON.stringify({ ...JSON.parse(await json.inputValue()), name, blocks }));
  await page.getByRole("button", { name: "Apply JSON" }).click();
  await page.getByRole("tab", { name: "Canvas" }).click();
}

const box = async (locator: Locator) => {
  const found = await locator.boundingBox();
  if (!found) throw new Error(`${locator} is not drawn`);
  return { ...found, right: found.x + found.width, bottom: found.y + found.height, center: found.x + found.width / 2 };
};

/** On one vertical spine (within a pixel of rounding at the canvas's zoom). */
const expectAligned = (a: number, b: number) => expect(Math.abs(a - b)).toBeLessThan(1.5);

/**
 * Nothing drawn over anything else: no two nodes (blocks, slots, joins, the start, the places
 * after composites; frames hold what they frame) overlap, and no "+" or arm label lies on a node.
 */
async function expectNoOverlaps(canvas: Locator) {
  const rects = (selector: string) =>
    canvas.locator(selector).evaluateAll((all) =>
      all.map((element) => {
        const r = element.getBoundingClientRect();
        const name = element.querySelector("[data-block-id],[data-slot],[data-join-of],[data-start],[data-after]");
        return { name: name?.outerHTML.slice(0, 80) ?? element.textContent ?? "", x: r.x, y: r.y, right: r.right, bottom: r.bottom };
      }),
    );
  const nodes = await rects(".react-flow__node:not(.react-flow__node-frame)");
  const marks = [...(await rects(".seq-insert")), ...(await rects(".seq-edge-label"))];
  expect(nodes.length).toBeGreaterThan(2);
  const apart = (a: (typeof nodes)[number], b: (typeof nodes)[number]) => a.right <= b.x || b.right <= a.x || a.bottom <= b.y || b.bottom <= a.y;
  nodes.forEach((a, i) => nodes.slice(i + 1).forEach((b) => expect(apart(a, b), `${a.name} overlaps ${b.name}`).toBe(true)));
  for (const mark of marks) for (const node of nodes) expect(apart(mark, node), `${mark.name} lies on ${node.name}`).toBe(true);
}

test.describe("each block type on the canvas", () => {
  test.beforeEach(async ({ page }) => {
    await signIn(page, "member@acme.test");
  });

  for (const [type, shape] of Object.entries(SHAPES)) {
    test(`${type}: drawn in execution order (screenshot kept)`, async ({ page }, testInfo) => {
      const { block } = shape;
      await openWith(page, `shape-${type}-${Date.now()}`, [call("before"), block, call("after")]);
      const canvas = page.locator(".seq-canvas");
      const node = (id: string) => canvas.locator(`[data-block-id="${id}"]`);
      await expect(node("after")).toBeVisible();
      await expect(canvas.getByRole("alert")).toHaveCount(0);

      // The block below its predecessor; the successor below the block's end (its join, or its frame).
      const before = await box(node("before"));
      const head = await box(node(String(block.id)));
      expect(head.y).toBeGreaterThan(before.bottom);
      const frame = canvas.locator(`[data-frame-of="${String(block.id)}"]`);
      const join = canvas.locator(`[data-join-of="${String(block.id)}"]`);
      const end = (await frame.count()) ? await box(frame) : (await join.count()) ? await box(join) : head;
      const after = await box(node("after"));
      expect(after.y).toBeGreaterThan(end.bottom);
      expectAligned(after.center, before.center);
      if ((await join.count()) && !(await frame.count())) expectAligned(after.center, (await box(join)).center);

      // Arms side by side, left to right in declaration order, below the block and above its end.
      const arms = await Promise.all((shape.arms ?? []).map((id) => box(node(id))));
      arms.forEach((arm, index) => {
        expect(arm.y, `${shape.arms![index]} below ${String(block.id)}`).toBeGreaterThan(head.bottom);
        expect(arm.bottom).toBeLessThan(end.bottom);
        if (index > 0) expect(arm.x, `${shape.arms![index]} right of ${shape.arms![index - 1]}`).toBeGreaterThan(arms[index - 1]!.right);
      });
      // A list's blocks one below the other, on one spine.
      const column = await Promise.all((shape.column ?? []).map((id) => box(node(id))));
      column.forEach((item, index) => {
        if (index === 0) return;
        expect(item.y, `${shape.column![index]} below ${shape.column![index - 1]}`).toBeGreaterThan(column[index - 1]!.bottom);
        expectAligned(item.center, column[0]!.center);
      });
      // The words on the arms, each over its arm, left to right.
      if (shape.labels) {
        const labels = canvas.locator(".seq-edge-label");
        const drawn = await labels.evaluateAll((all) => all.map((label) => ({ text: label.textContent ?? "", x: label.getBoundingClientRect().x })));
        const ordered = drawn.filter((label) => shape.labels!.includes(label.text)).sort((a, b) => a.x - b.x).map((label) => label.text);
        expect(ordered).toEqual(shape.labels);
        if (shape.arms && shape.labels.length === shape.arms.length) {
          for (const [index, text] of shape.labels.entries()) {
            const label = await box(labels.filter({ hasText: text }).first());
            const arm = arms[index]!;
            expect(label.center, `${text} over its arm`).toBeGreaterThan(arm.x);
            expect(label.center).toBeLessThan(arm.right);
            expect(label.bottom).toBeLessThanOrEqual(arm.y);
          }
        }
      }
      for (const word of shape.absent ?? []) {
        await expect(canvas.locator(".seq-edge-label", { hasText: word })).toHaveCount(0);
        await expect(canvas.locator(`[data-slot="${word}"]`)).toHaveCount(0);
      }
      await expectNoOverlaps(canvas);
      if (type === "saga") {
        // Each saga step's id labels the way into its action.
        for (const id of ["book_hotel", "notify"]) await expect(canvas.locator(".seq-edge-label", { hasText: id })).toBeVisible();
      }

      const shot = testInfo.outputPath(`canvas-${type}.png`);
      await canvas.screenshot({ path: shot });
      await testInfo.attach(`canvas-${type}`, { path: shot, contentType: "image/png" });
    });
  }
});

test("the cleanup trees are drawn on the canvas like the main tree, each in its own tab (screenshots kept)", async ({ page }, testInfo) => {
  await signIn(page, "member@acme.test");
  await page.goto("/t/acme/sequences/new");
  await page.getByRole("tab", { name: "JSON" }).click();
  const json = page.getByRole("tabpanel", { name: "JSON" }).getByRole("textbox");
  await json.fill(
    JSON.stringify({
      ...JSON.parse(await json.inputValue()),
      name: `cleanup-${Date.now()}`,
      blocks: [call("work")],
      // Each tree its own id space (A.2): `notify` may be in both.
      on_failure: [call("notify"), { type: "parallel", id: "undo", branches: [[call("refund")], [call("release")]] }],
      on_cancel: [call("notify")],
    }),
  );
  await page.getByRole("button", { name: "Apply JSON" }).click();
  await page.getByRole("tab", { name: "Canvas" }).click();
  const canvas = page.locator(".seq-canvas");
  const node = (id: string) => canvas.locator(`[data-block-id="${id}"]`);

  await expect(node("work")).toBeVisible();
  await expect(node("notify")).toHaveCount(0);
  await page.getByRole("tab", { name: "on_failure" }).click();
  await expect(node("work")).toHaveCount(0);
  const [notify, undo, refund, release] = await Promise.all(["notify", "undo", "refund", "release"].map((id) => box(node(id))));
  expect(undo!.y).toBeGreaterThan(notify!.bottom);
  expect(refund!.y).toBeGreaterThan(undo!.bottom);
  expect(release!.x).toBeGreaterThan(refund!.right);
  // Its first block has a "+" before it, as the main tree's has.
  await expect(canvas.getByRole("button", { name: "Add a block before notify" })).toBeVisible();
  await expectNoOverlaps(canvas);
  await canvas.screenshot({ path: testInfo.outputPath("canvas-on_failure.png") });
  await testInfo.attach("canvas-on_failure", { path: testInfo.outputPath("canvas-on_failure.png"), contentType: "image/png" });

  await page.getByRole("tab", { name: "on_cancel" }).click();
  await expect(node("notify")).toHaveCount(1);
  await expect(node("undo")).toHaveCount(0);
  await canvas.screenshot({ path: testInfo.outputPath("canvas-on_cancel.png") });
  await testInfo.attach("canvas-on_cancel", { path: testInfo.outputPath("canvas-on_cancel.png"), contentType: "image/png" });
});
