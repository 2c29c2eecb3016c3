// A tenant's lifecycle from its console page: the operator sets its lag objective and retention,
// sees the retention card on the Resources page, and deletes the tenant with a typed confirmation;
// an engine runs the deletion, the card follows it to "Deleted", and the tenant's page is then the
// same document as a tenant that never existed.
import { randomBytes } from "node:crypto";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { bulkheadCli, DEMO_OPERATOR, signIn } from "./fixtures.ts";

/**
 * A raw GET's status, title and the flight rows of its document, the slug swapped for a
 * placeholder. The rows are compared as a set, their ids left out: Next.js streams them in the
 * order its server components finish, which varies from one request to the next.
 */
async function documentOf(request: APIRequestContext, slug: string) {
  const response = await request.get(`/ops/tenants/${slug}`, { maxRedirects: 0 });
  const html = (await response.text()).replaceAll(slug, "<slug>");
  // Row ids, and references to them, are numbered in that order too.
  const rows = html.split("\\n").map((row) => row.replace(/^[0-9a-f]+:/, "").replace(/\$([LhQ@])[0-9a-f]+/g, "$$$1#")).sort();
  return { status: response.status(), title: /<title>([^<]*)<\/title>/.exec(html)?.[1], rows };
}

test("an operator sets a tenant's retention, then deletes the tenant with a typed confirmation", async ({ page }, testInfo) => {
  const slug = `bye-${randomBytes(3).toString("hex")}`;
  await bulkheadCli("tenants", "create", slug);
  await signIn(page, DEMO_OPERATOR);
  await page.goto(`/ops/tenants/${slug}`);

  await test.step("the lag objective and retention: saved across a reload", async () => {
    const form = page.getByRole("form", { name: "Lag objective and retention", exact: true });
    await expect(form.getByRole("spinbutton", { name: "Retention, days" })).toHaveAttribute("placeholder", "default: 30");
    await form.getByRole("spinbutton", { name: "Lag p99 objective, ms" }).fill("250");
    await form.getByRole("spinbutton", { name: "Retention, days" }).fill("7");
    await form.getByRole("button", { name: "Save objective and retention" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Saved: lag objective 250 ms, retention 7 days." })).toBeVisible();
    await page.reload();
    await expect(form.getByRole("spinbutton", { name: "Retention, days" })).toHaveValue("7");
    await expect(form.getByRole("spinbutton", { name: "Lag p99 objective, ms" })).toHaveValue("250");
  });

  await test.step("delete: refused until the id is typed, then followed to the end", async () => {
    const form = page.getByRole("form", { name: "Delete tenant", exact: true });
    const button = form.getByRole("button", { name: "Delete tenant" });
    await expect(button).toBeDisabled();
    await form.getByRole("textbox").fill(slug.slice(0, -1));
    await expect(button).toBeDisabled();
    await form.getByRole("textbox").fill(slug);
    await button.click();
    const progress = page.getByRole("status", { name: "Deletion progress" });
    await expect(progress).toContainText("Deleted.", { timeout: 30_000 });
    await page.locator("#delete-heading").scrollIntoViewIfNeeded();
    await page.screenshot({ path: testInfo.outputPath("tenant-deleted.png") });
  });

  await test.step("afterwards its page is the same document as a tenant that never existed", async () => {
    const never = `never-${randomBytes(3).toString("hex")}`;
    const gone = await documentOf(page.request, slug);
    expect(gone.status).toBe(404);
    expect(gone).toEqual(await documentOf(page.request, never));
    const audit = await page.request.get(`/api/trpc/ops.audit.list?input=${encodeURIComponent(JSON.stringify({ action: "tenant.delete." }))}`);
    expect(await audit.text()).toContain(slug);
  });

  await test.step("the Resources page shows the retention card", async () => {
    await page.goto("/ops/resources");
    await expect(page.getByRole("heading", { name: "Rows pending pruning" })).toBeVisible();
    await expect(page.getByText(/default retention is 30 days/)).toBeVisible();
  });
});
