// SequenceCache: entries are a tenant's own, the most recently used are the ones a claim names,
// and a batch's known sequences are read before any parse may evict them.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ClaimedRow } from "../storage/index.ts";
import { SequenceCache, sequenceKey } from "./sequence-cache.ts";

const uuids = new Map<string, string>();
const definition = (name: string) => {
  if (!uuids.has(name)) uuids.set(name, randomUUID());
  return { id: uuids.get(name)!, tenant_id: "t", namespace: "default", name: `seq-${name}`, version: 1, created_at: new Date().toISOString(), blocks: [{ type: "step", id: "s", handler: "noop" }] };
};
const row = (tenantId: string, sequenceId: string, def: unknown) => ({ tenantId, sequenceId, definition: def }) as ClaimedRow;

describe("SequenceCache", () => {
  it("never serves one tenant's parsed sequence to another tenant's instance naming the same id", () => {
    const cache = new SequenceCache();
    expect(cache.get("globex", "s1", definition("s1"))?.name).toBe("seq-s1");
    expect(cache.get("acme", "s1", null)).toBeNull();
    expect(cache.get("globex", "s1", null)?.name).toBe("seq-s1");
  });

  it("names the most recently used sequences, as the claim statement's keys", () => {
    const cache = new SequenceCache();
    for (const id of ["a", "b", "c"]) cache.get("t", id, definition(id));
    cache.get("t", "a", null); // used again: most recent
    expect(cache.recent(2)).toEqual([sequenceKey("t", "c"), sequenceKey("t", "a")]);
  });

  it("resolves a batch's known sequences before parsing new ones that evict them", () => {
    const cache = new SequenceCache(2);
    cache.get("t", "a", definition("a"));
    cache.get("t", "b", definition("b"));
    // The claim left out a and b (known); c and d are new and, parsed, evict both.
    const resolved = cache.resolve([row("t", "c", definition("c")), row("t", "a", null), row("t", "d", definition("d")), row("t", "b", null)]);
    expect(resolved.map((s) => s?.name)).toEqual(["seq-c", "seq-a", "seq-d", "seq-b"]);
    expect(cache.recent(5)).toEqual([sequenceKey("t", "c"), sequenceKey("t", "d")]);
  });
});
