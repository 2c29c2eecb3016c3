// The resource ledger is the one list: the README shows exactly it, every row names a real
// enforcement point, every enforced row a real noisy-neighbour test, and no boundary is left open.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LEDGER, ledgerMarkdown } from "../engine/resources/ledger.ts";
import { README_PATH, withLedger } from "../scripts/ledger-readme.ts";

const root = path.resolve(import.meta.dirname, "..");

describe("the resource ledger", () => {
  it("is what the README shows (run npm run ledger after changing it)", () => {
    const readme = readFileSync(README_PATH, "utf8");
    expect(withLedger(readme, ledgerMarkdown())).toBe(readme);
  });

  it.each(LEDGER.map((e) => [e.id, e] as const))("%s names files that exist, and a test once enforced", (_id, entry) => {
    expect(existsSync(path.join(root, entry.enforcedAt)), entry.enforcedAt).toBe(true);
    if (entry.enforced) {
      expect(entry.test).not.toBeNull();
      expect(existsSync(path.join(root, entry.test!)), entry.test!).toBe(true);
    }
    expect(["per tenant", "tiered", "global"]).toContain(entry.boundary);
  });

  it("has one row per resource", () => {
    expect(new Set(LEDGER.map((e) => e.id)).size).toBe(LEDGER.length);
  });
});
