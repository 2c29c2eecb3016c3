// The engine process boots against its databases, logs JSON, and exits 0 on SIGTERM.
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../test/db.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

it("starts, logs structured JSON, and stops cleanly on SIGTERM", async () => {
  const engine = spawn(path.resolve("node_modules/.bin/tsx"), ["engine/main.ts"], {
    env: { ...process.env, DATABASE_URL: db.url, BULKHEAD_LOG_LEVEL: "info" },
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
  expect(await exited).toBe(0);

  const logs = lines.map((line) => JSON.parse(line));
  expect(logs.map((l) => l.msg)).toEqual(["backend connected", "engine started", "engine stopping", "engine stopped"]);
  expect(logs[0]).toMatchObject({ process: "engine", backend_id: "primary", level: 30 });
});
