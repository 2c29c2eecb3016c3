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
  const params = inspector(page).getByLabel("Params (JSON)", { exact: true });
  await params.fill(JSON.stringify({ message }));
  await params.blur();
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
