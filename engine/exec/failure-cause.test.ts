import { describe, expect, it } from "vitest";
import { Sequence } from "../sequence/schema.ts";
import { failureCause, fingerprintOf, normalizeMessage } from "./failure-cause.ts";
import type { TreeCursor } from "./tree/state.ts";

describe("normalizeMessage", () => {
  it("replaces what varies between occurrences, and keeps the words", () => {
    expect(normalizeMessage("order 4711 not found")).toBe(normalizeMessage("order 4712 not found"));
    expect(normalizeMessage("HTTP 503 Service Unavailable: vendor down")).toBe("HTTP # Service Unavailable: vendor down");
    expect(normalizeMessage("instance 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b failed")).toBe("instance <id> failed");
    expect(normalizeMessage("commit deadbeef12 rejected")).toBe("commit <hex> rejected");
    // Plain words of hex letters are words, not ids.
    expect(normalizeMessage("decade faced a cafe")).toBe("decade faced a cafe");
    expect(normalizeMessage("  two\n lines ")).toBe("two lines");
  });

  it("makes a fingerprint of the handler and the message", () => {
    expect(fingerprintOf("http_request", "HTTP 503: down")).toBe("http_request: HTTP #: down");
    expect(fingerprintOf(null, "x")).toBe("engine: x");
    expect(fingerprintOf("h", "y".repeat(1000))).toHaveLength(300);
  });
});

describe("failureCause", () => {
  const sequence = { blocks: Sequence.shape.blocks.parse([
      { type: "try_catch", id: "guard", try_block: [{ type: "step", id: "caught", handler: "flaky" }], catch_block: [] },
      { type: "parallel", id: "p", branches: [[{ type: "step", id: "ok", handler: "noop" }], [{ type: "step", id: "bad", handler: "http_request" }]] },
  ]) };
  const cursor = (nodes: TreeCursor["nodes"]): TreeCursor => ({ v: 2, nodes });

  it("is the first uncaught failed step, inside the failed composite, never one a try_catch recovered from", () => {
    const cause = failureCause(cursor({
      guard: { status: "completed" }, caught: { status: "failed", failure: { message: "caught it", retryable: false } },
      p: { status: "failed" }, ok: { status: "completed" },
      bad: { status: "failed", failure: { message: "HTTP 500 for order 17", retryable: true, handler: "http_request" } },
    }), sequence.blocks);
    expect(cause).toEqual({ blockId: "bad", message: "HTTP 500 for order 17", handler: "http_request", fingerprint: "http_request: HTTP # for order #" });
  });

  it("is null when nothing failed", () => {
    expect(failureCause(cursor({ guard: { status: "completed" } }), sequence.blocks)).toBeNull();
  });
});
