// Shared helpers of the e2e specs.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";
import { expect, type Page } from "@playwright/test";
import pg from "pg";
import { DEMO_PASSWORD } from "../prisma/seed.ts";
import { E2E_SERVER_ENV } from "./env.ts";

export { DEMO_OPERATOR, DEMO_PASSWORD, DEMO_TENANTS } from "../prisma/seed.ts";

/** Signs in through the form on /signin (or the page it is on) and waits until it has left it. */
export async function signIn(page: Page, email: string, password = DEMO_PASSWORD): Promise<void> {
  if (!new URL(page.url(), "http://x").pathname.startsWith("/signin")) await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/signin/);
}

/** The text of the page's <main>, whitespace collapsed. */
export async function mainText(page: Page): Promise<string> {
  const text = await page.locator("main").innerText();
  return text.replace(/\s+/g, " ").trim();
}

const ROOT = path.resolve(import.meta.dirname, "..");

/**
 * Runs `npm run bulkhead -- <args>` against the e2e server's database (the CLI attaches to the
 * running embedded PostgreSQL); the environment is the one playwright.config.ts gives the server.
 */
export async function bulkheadCli(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    path.join(ROOT, "node_modules", ".bin", "tsx"),
    ["scripts/bulkhead.ts", ...args],
    {
      cwd: ROOT,
      env: { ...process.env, ...E2E_SERVER_ENV, DATABASE_URL: "" },
      timeout: 60_000,
    },
  );
  return stdout;
}

/** A new API key of the tenant from the CLI: its secret, the last line of what it prints. */
export async function createTenantKey(tenant: string, name: string): Promise<string> {
  return (await bulkheadCli("api-keys", "create", tenant, "--name", name)).trim().split("\n").at(-1)!;
}

/** A new operator API key from the CLI: its secret, the last line of what it prints. */
export async function createOperatorKey(name: string): Promise<string> {
  return (await bulkheadCli("api-keys", "create", "--operator", "--name", name)).trim().split("\n").at(-1)!;
}

/**
 * A new account of its own, made with the CLI (no tenant unless `memberOf` names one), for a test
 * that changes a password or ends sessions: the demo users stay as the other specs expect them.
 */
export async function createTestUser(password: string, memberOf?: { tenant: string; role: "admin" | "member" }): Promise<string> {
  const email = `e2e-${randomBytes(4).toString("hex")}@example.test`;
  await bulkheadCli("users", "create", email, "--password", password);
  if (memberOf) await bulkheadCli("members", "add", memberOf.tenant, email, "--role", memberOf.role);
  return email;
}

/** Runs `work` on a connection of its own to the e2e server's primary database (where new tenants are placed). */
export async function withDb<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${E2E_SERVER_ENV.BULKHEAD_PG_PORT}/bulkhead` });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
