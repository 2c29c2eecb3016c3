// OAuth2 refresh (wire-format N) against a local token endpoint and a real PostgreSQL: a
// credential expiring within five minutes is refreshed with a form-encoded POST, its value merged
// and its expiry moved; one expiring later is left alone; a failing endpoint, and one the outbound
// guard does not allow, leave the credential exactly as it was.
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { makeTenant } from "../../test/factories.ts";
import { createBuiltInHandlers } from "../handlers/registry.ts";
import { createLogger } from "../logger.ts";
import { asTenantId, BackendStore, type TenantStore } from "../storage/index.ts";
import { refreshExpiringCredentials } from "./oauth-refresh.ts";
import { open } from "./sealed-text.ts";

const keyBefore = process.env.BULKHEAD_ENCRYPTION_KEY;
let db: TestDatabase;
let store: TenantStore;
let tokenServer: http.Server;
let base = "";
const requests: { url: string; contentType: string; body: string }[] = [];
const log = createLogger("test", "silent");

beforeAll(async () => {
  process.env.BULKHEAD_ENCRYPTION_KEY = randomBytes(32).toString("hex");
  db = await freshDatabase();
  store = await db.storage.tenant(asTenantId((await makeTenant(db)).id));
  tokenServer = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      requests.push({ url: req.url!, contentType: req.headers["content-type"] ?? "", body });
      if (req.url === "/broken") return void res.writeHead(500).end("down");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: "at-new", refresh_token: "rt-new", expires_in: 3600 }));
    });
  });
  await new Promise<void>((resolve) => tokenServer.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => tokenServer.close(resolve));
  await db.drop();
  if (keyBefore === undefined) delete process.env.BULKHEAD_ENCRYPTION_KEY;
  else process.env.BULKHEAD_ENCRYPTION_KEY = keyBefore;
});

const oauth = (id: string, refreshUrl: string, expiresInMs: number) => store.createCredential({
  id, name: id, kind: "oauth2", value: JSON.stringify({ access_token: "at-old", scope: "read" }), refreshToken: "rt-old", refreshUrl,
  expiresAt: new Date(Date.now() + expiresInMs), description: null,
});
const stored = async (id: string) => {
  const { rows } = await db.sql.query("SELECT value, refresh_token, expires_at FROM credentials WHERE id = $1", [id]);
  return { value: JSON.parse(open(rows[0].value)), refreshToken: open(rows[0].refresh_token), expiresAt: rows[0].expires_at as Date, raw: rows[0] };
};
const engine = (allow: string[]) => createBuiltInHandlers({ httpAllow: allow }).outbound!;

it("refreshes what expires within five minutes, merging the answer, and leaves the rest alone", async () => {
  await oauth("soon", `${base}/token`, 60_000);
  await oauth("later", `${base}/token`, 60 * 60_000);
  const now = new Date();
  expect(await refreshExpiringCredentials(new BackendStore(db.storage.backends.primary), engine([base.slice(7)]), log, now)).toBe(1);
  expect(requests).toEqual([{ url: "/token", contentType: "application/x-www-form-urlencoded", body: "grant_type=refresh_token&refresh_token=rt-old" }]);
  const soon = await stored("soon");
  expect(soon.value).toEqual({ access_token: "at-new", refresh_token: "rt-new", scope: "read" });
  expect(soon.refreshToken).toBe("rt-new");
  expect(soon.expiresAt.getTime()).toBe(now.getTime() + 3_600_000);
  expect(JSON.stringify(soon.raw)).not.toContain("at-new");
  expect((await stored("later")).value.access_token).toBe("at-old");
});

it("a failing endpoint, and one the outbound guard refuses, leave the credential as it was", async () => {
  requests.length = 0;
  await oauth("broken", `${base}/broken`, 60_000);
  const before = await stored("broken");
  const backend = new BackendStore(db.storage.backends.primary);
  expect(await refreshExpiringCredentials(backend, engine([base.slice(7)]), log)).toBe(0);
  expect(requests.map((r) => r.url)).toEqual(["/broken"]);
  // Not allow-listed: 127.0.0.1 is loopback, and the guard refuses it before any request.
  await db.sql.query("UPDATE credentials SET refresh_url = $1 WHERE id = 'broken'", [`${base}/token`]);
  expect(await refreshExpiringCredentials(backend, engine([]), log)).toBe(0);
  expect(requests.map((r) => r.url)).toEqual(["/broken"]);
  expect((await stored("broken")).raw.value).toBe(before.raw.value);
});
