// The engine process boots against its databases, logs JSON, and exits 0 on SIGTERM.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../test/db.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

/** Runs the engine until it has started, stops it with SIGTERM; its exit code and log lines. */
async function bootAndStop(env: Record<string, string | undefined>) {
  const engine = spawn(path.resolve("node_modules/.bin/tsx"), ["engine/main.ts"], {
    env: { ...process.env, DATABASE_URL: db.url, BULKHEAD_LOG_LEVEL: "info", ...env },
  });
  const lines: string[] = [];
  let buffer = "";
  const started = new Promise<void>((resolve) => {
    engine.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      lines.push(...parts);
      if (parts.some((line) => line.includes('"engine started"'))) resolve();
    });
  });
  const exited = new Promise<number | null>((resolve) => engine.on("close", resolve));
  await started;
  engine.kill("SIGTERM");
  return { code: await exited, logs: lines.map((line) => JSON.parse(line) as { msg: string; level: number }) };
}

it("starts, logs structured JSON, and stops cleanly on SIGTERM", async () => {
  // As npm start runs it: with an encryption key.
  const { code, logs } = await bootAndStop({ BULKHEAD_ENCRYPTION_KEY: randomBytes(32).toString("hex") });
  expect(code).toBe(0);
  expect(logs.map((l) => l.msg)).toEqual(["backend connected", "engine started", "engine stopping", "engine stopped"]);
  expect(logs[0]).toMatchObject({ process: "engine", backend_id: "primary", level: 30 });
});

it("warns at start when no encryption key is set, since credentials are then stored in plaintext", async () => {
  const { code, logs } = await bootAndStop({ BULKHEAD_ENCRYPTION_KEY: undefined });
  expect(code).toBe(0);
  expect(logs[0]).toMatchObject({ level: 40, msg: "BULKHEAD_ENCRYPTION_KEY is not set: credentials are stored in plaintext" });
});
