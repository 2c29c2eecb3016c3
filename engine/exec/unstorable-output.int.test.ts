// A handler whose output (or error text) PostgreSQL cannot store must not poison the group commit:
// the step fails for good with a readable message, the instance ends failed, and a sibling
// instance in the same batch completes.
import { afterAll, beforeAll, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../test/db.ts";
import { insertInstancesOf, insertSequence } from "../../test/factories.ts";
import { makeScheduler } from "../../test/scheduler.ts";
import { HandlerRegistry } from "../handlers/registry.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(() => db.drop());

it("fails the step on an unstorable output, stores a vendor's NUL error text readably, and completes the others", async () => {
  const scheduler = makeScheduler(db, {
    handlers: new HandlerRegistry([
      ["vendor_nul", async () => ({ kind: "success", output: { body: "bin\u0000ary" } })],
      ["vendor_err", async () => ({ kind: "failure", retryable: false, message: "bad \ud800 reply" })],
      ["fine", async () => ({ kind: "success", output: { ok: true } })],
    ]),
  });
  const nul = await insertSequence(db, "acme", [{ type: "step", id: "call", handler: "vendor_nul" }]);
  const err = await insertSequence(db, "acme", [{ type: "step", id: "call", handler: "vendor_err" }]);
  const fine = await insertSequence(db, "acme", [{ type: "step", id: "call", handler: "fine" }]);
  const [a] = await insertInstancesOf(db, "acme", nul);
  const [b] = await insertInstancesOf(db, "acme", err);
  const [c] = await insertInstancesOf(db, "acme", fine);
  await scheduler.start();
  try {
    const state = async (id: string) => (await db.sql.query("SELECT state FROM task_instances WHERE id = $1", [id])).rows[0].state;
    await expect.poll(async () => [await state(a!), await state(b!), await state(c!)], { timeout: 10_000 }).toEqual(["failed", "failed", "completed"]);
    const output = async (id: string) => (await db.sql.query("SELECT output FROM block_outputs WHERE instance_id = $1 ORDER BY created_at DESC LIMIT 1", [id])).rows[0].output;
    expect(JSON.stringify(await output(a!))).toContain("the handler's output cannot be stored: output.body: contains a NUL (\\\\u0000) character");
    expect(JSON.stringify(await output(b!))).toContain("bad \uFFFD reply");
  } finally {
    await scheduler.stop();
  }
});
