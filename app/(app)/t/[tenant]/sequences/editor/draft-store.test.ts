import { describe, expect, it } from "vitest";
import { differsFrom, newerDraft, outlivesDiscard } from "./draft-store.ts";

const version = { id: "a", version: 1, created_at: "2026-01-01T00:00:00.000Z", name: "n", namespace: "default", blocks: [{ type: "step", id: "s", handler: "noop" }] };

describe("differsFrom", () => {
  it("ignores what a save sets afresh (id, version, created_at) and the row's own columns (status, deprecated)", () => {
    expect(differsFrom({ ...version, id: "b", version: 7, created_at: "2027-01-01T00:00:00.000Z", status: "draft", deprecated: true }, version)).toBe(false);
  });

  it("does not depend on key order, and treats an undefined field as absent", () => {
    const reordered = { blocks: [{ handler: "noop", id: "s", type: "step" }], namespace: "default", name: "n", when: undefined };
    expect(differsFrom(reordered, version)).toBe(false);
  });

  it("sees an edited field, a block added and a renamed sequence", () => {
    expect(differsFrom({ ...version, blocks: [{ type: "step", id: "s", handler: "log" }] }, version)).toBe(true);
    expect(differsFrom({ ...version, blocks: [...version.blocks, { type: "step", id: "t", handler: "noop" }] }, version)).toBe(true);
    expect(differsFrom({ ...version, name: "m" }, version)).toBe(true);
  });

  it("counts everything as a change when there is no version to compare with", () => {
    expect(differsFrom(version, null)).toBe(true);
  });
});

describe("newerDraft", () => {
  const at = (updatedAt: string) => ({ definition: version, updatedAt });
  it("takes the later copy, or the one there is", () => {
    const [early, late] = [at("2026-12-01T10:00:00.000Z"), at("2026-12-01T10:00:01.000Z")];
    expect(newerDraft(early, late)).toBe(late);
    expect(newerDraft(late, early)).toBe(late);
    expect(newerDraft(null, early)).toBe(early);
    expect(newerDraft(null, null)).toBeNull();
  });
});

describe("outlivesDiscard", () => {
  const at = (updatedAt: string) => ({ definition: version, updatedAt });
  it("drops a server copy no newer than this browser's discard, and keeps one edited after it", () => {
    const discardedAt = "2026-12-01T10:00:05.000Z";
    expect(outlivesDiscard(at("2026-12-01T10:00:04.000Z"), discardedAt)).toBeNull();
    expect(outlivesDiscard(at(discardedAt), discardedAt)).toBeNull();
    const later = at("2026-12-01T10:00:06.000Z");
    expect(outlivesDiscard(later, discardedAt)).toBe(later);
  });

  it("keeps the server copy when nothing was discarded here", () => {
    const copy = at("2026-12-01T10:00:04.000Z");
    expect(outlivesDiscard(copy, null)).toBe(copy);
    expect(outlivesDiscard(null, "2026-12-01T10:00:05.000Z")).toBeNull();
  });
});
