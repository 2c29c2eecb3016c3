// The sign-in throttle counts failures per client address: the socket's, since the e2e server
// trusts no proxy (BULKHEAD_TRUSTED_PROXIES unset). Headers a client sends to look like another
// address, x-forwarded-for and the web server's own peer header included, change nothing.
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import pg from "pg";
import { E2E_SERVER_ENV } from "./env.ts";

const SPOOFED = ["198.51.100.77", "198.51.100.78", "198.51.100.79"];

test("a failed sign-in counts against the socket's address, not the one the client claims", async ({ page }) => {
  const email = `nobody-${randomBytes(4).toString("hex")}@example.test`;
  await page.setExtraHTTPHeaders({
    "x-forwarded-for": SPOOFED[0]!,
    "x-bulkhead-peer-address": SPOOFED[1]!,
    "x-real-ip": SPOOFED[2]!,
  });
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.locator(".alert-error")).toHaveText("Wrong email or password.");

  const client = new pg.Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${E2E_SERVER_ENV.BULKHEAD_PG_PORT}/bulkhead` });
  await client.connect();
  try {
    const { rows } = await client.query<{ key: string }>("SELECT key FROM sign_in_throttles WHERE key = $1 OR key LIKE 'ip:%'", [`account:${email}`]);
    const keys = rows.map((row) => row.key);
    expect(keys).toContain(`account:${email}`);
    expect(keys.filter((key) => key.startsWith("ip:")).some((key) => ["ip:127.0.0.1", "ip:::1"].includes(key))).toBe(true);
    for (const address of SPOOFED) expect(keys).not.toContain(`ip:${address}`);
  } finally {
    await client.end();
  }
});
