// Finding runs: the instances of one batch show short ids that differ (the ids' random ends, not
// their shared timestamp starts), and the search box finds a run by part of its short id, by a
// context field and by its whole id (offering to open it), kept in the address across a reload.
import { expect, test } from "@playwright/test";
import { randomBytes, randomUUID } from "node:crypto";
import { bulkheadCli, signIn } from "./fixtures.ts";

test("a batch shows distinct short ids, and the search finds a run by short id, context field and whole id", async ({ page, request }) => {
  test.setTimeout(90_000);
  const run = randomBytes(3).toString("hex");
  const key = (await bulkheadCli("api-keys", "create", "acme", "--name", `search-e2e-${run}`)).trim().split("\n").at(-1)!;
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const sequenceId = randomUUID();
  const created = await request.post("/api/v1/sequences", {
    headers,
    data: {
      id: sequenceId, tenant_id: "acme", namespace: "default", name: `search-${run}`, version: 1,
      created_at: new Date().toISOString(), blocks: [{ type: "step", id: "wait", handler: "noop" }],
    },
  });
  expect(created.status()).toBe(201);
  // One batch of 10, due far in the future so the engine leaves them alone.
  const farFuture = new Date(Date.now() + 86_400_000).toISOString();
  const instances = Array.from({ length: 10 }, (_, i) => ({
    sequence_id: sequenceId, tenant_id: "acme", namespace: "default", next_fire_at: farFuture,
    context: { data: { order: `O-${run}-${i}`, position: i } },
  }));
  const batch = await request.post("/api/v1/instances/batch", { headers, data: { instances } });
  expect(batch.status()).toBe(201);

  await signIn(page, "member@acme.test");
  await page.goto(`/t/acme/instances?sequence=${sequenceId}`);
  const table = page.getByRole("table", { name: "Instances" });
  const rows = table.locator("tbody tr");
  await expect(rows).toHaveCount(10);

  // Ten different short ids, each the last 12 hex digits of its id, while the ids' starts (what
  // the short id used to be) are one timestamp.
  const shown = await rows.locator("a code").evaluateAll((codes) => codes.map((c) => ({ text: c.textContent ?? "", id: c.getAttribute("title") ?? "" })));
  expect(shown).toHaveLength(10);
  for (const { text, id } of shown) {
    expect(text).toMatch(/^[0-9a-f]{12}$/);
    expect(id.endsWith(text)).toBe(true);
  }
  expect(new Set(shown.map((s) => s.text)).size).toBe(10);
  expect(new Set(shown.map((s) => s.id.slice(0, 8))).size).toBe(1);

  const search = page.getByRole("searchbox", { name: "Search" });
  /** Types `text`, waits until the box applied it (it does once typing pauses) and, with `found`, until the list shows that many for it. */
  const searchFor = async (text: string, found?: number) => {
    await search.fill(text);
    await expect.poll(() => new URL(page.url()).searchParams.get("q")).toBe(text);
    if (found !== undefined) {
      await expect(page.getByText(`Showing ${found} ${found === 1 ? "instance" : "instances"} matching “${text}”`)).toBeVisible();
      await expect(rows).toHaveCount(found);
    }
  };

  // Part of a short id: its first 6 digits.
  const target = shown[4]!;
  await searchFor(target.text.slice(0, 6), 1);
  await expect(rows.locator("a code")).toHaveText(target.text);
  await expect(rows.locator("a")).toHaveAttribute("href", `/t/acme/instances/${target.id}`);

  // A context field: exactly the run with that order.
  await searchFor(`data.order = "O-${run}-7"`, 1);
  const found = (await rows.locator("a code").getAttribute("title"))!;
  expect(shown.map((s) => s.id)).toContain(found);
  await page.screenshot({ path: "test-results/instance-search.png", fullPage: true });

  // Kept in the address: a reload shows the same search and the same run.
  await page.reload();
  await expect(search).toHaveValue(`data.order = "O-${run}-7"`);
  await expect(page.getByText(`Showing 1 instance matching “data.order = "O-${run}-7"”`)).toBeVisible();
  await expect(rows.locator("a code")).toHaveAttribute("title", found);

  // A number, and nothing matching: the empty state names the search.
  await searchFor("data.position = 7", 1);
  await expect(rows.locator("a code")).toHaveAttribute("title", found);
  await searchFor(`data.order = "none-${run}"`);
  await expect(page.getByText(`No instance matches “data.order = "none-${run}"” with these filters.`)).toBeVisible();

  // Too little to search: the box says why, and nothing is asked.
  await searchFor("ab");
  await expect(page.getByRole("alert").filter({ hasText: "characters" })).toHaveText("Type at least 4 characters of a short id.");
  await expect(search).toHaveAttribute("aria-invalid", "true");

  // The whole id: offered as a link, which opens that run with its context.
  await searchFor(found.toUpperCase(), 1);
  const offer = page.getByRole("status").filter({ hasText: "has this id" });
  await expect(offer).toContainText(found.slice(-12));
  await offer.getByRole("link", { name: "Open instance" }).click();
  await expect(page).toHaveURL(`/t/acme/instances/${found}`);
  await expect(page.getByLabel("Instance context as JSON")).toContainText(`"order": "O-${run}-7"`);
  await expect(page).toHaveTitle(new RegExp(`Instance ${found.slice(-12)}`));
});
