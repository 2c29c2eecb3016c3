import { describe, expect, it } from "vitest";
import { uuidv7 } from "./ids.ts";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("uuidv7", () => {
  it("mints version 7 ids of the RFC 9562 variant, with the time in the first 48 bits", () => {
    const now = Date.now();
    const id = uuidv7(now);
    expect(id).toMatch(UUID_V7);
    expect(parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBeGreaterThanOrEqual(now);
  });

  it("keeps ids unique and increasing within one millisecond, past many refills of its random pool", () => {
    const now = Date.now() + 60_000;
    const ids = Array.from({ length: 3000 }, () => uuidv7(now));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    // The random tail (after the counter) differs from id to id.
    expect(new Set(ids.map((id) => id.slice(19))).size).toBe(ids.length);
  });
});
