// The run view's derived data and words: failures caught or not, live steps, latest outputs,
// attempt counts; and one pass over a tree of thousands of nodes.
import { describe, expect, it } from "vitest";
import type { DetailAttempt, DetailNode, InstanceDetailData } from "./detail-types.ts";
import { attemptOf, attemptsSummary, errorOutputMessage, formatDuration } from "./run-format.ts";
import { runModel } from "./run-model.ts";

const T0 = Date.parse("2026-12-01T10:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const err = { message: "HTTP 503: vendor down", retryable: true, code: "http_status", handler: "http_request", httpStatus: 503 };

function attempt(n: number, from: number, to: number | null, extra: Partial<DetailAttempt> = {}): DetailAttempt {
  return { attempt: n, startedAt: at(from), finishedAt: to === null ? null : at(to), workerId: null, interrupted: null, error: null, ...extra };
}

function node(blockId: string, parentId: string | null, extra: Partial<DetailNode> = {}): DetailNode {
  return {
    id: blockId, blockId, parentId, blockType: "step", branchIndex: null, state: "pending", startedAt: null, completedAt: null,
    attempt: 0, pausedWhileRunning: false, error: null, attempts: [], handler: "noop", params: null, maxAttempts: 1, ...extra,
  } as DetailNode;
}

function data(state: string, nodes: DetailNode[], outputs: Partial<InstanceDetailData["outputs"][number]>[] = []): InstanceDetailData {
  return {
    instance: { id: "i", state, updatedAt: at(0), createdAt: at(0) },
    nodes,
    outputs: outputs.map((o, i) => ({ id: String(i), attempt: 0, output: null, outputRef: null, createdAt: at(i), blockId: "x", ...o })),
  } as unknown as InstanceDetailData;
}

describe("runModel", () => {
  it("names each node's arm in the editor's words: try and catch, branch 1 and 2", () => {
    const blocks = [
      { type: "parallel", id: "fan", branches: [[{ type: "step", id: "a", handler: "noop" }], [{ type: "step", id: "b", handler: "noop" }]] },
      { type: "try_catch", id: "guard", try_block: [{ type: "step", id: "charge", handler: "noop" }], catch_block: [{ type: "step", id: "note", handler: "noop" }] },
    ];
    const nodes = [
      node("fan", null, { blockType: "parallel" }), node("a", "fan", { branchIndex: 0 }), node("b", "fan", { branchIndex: 1 }),
      node("guard", null, { blockType: "try_catch" }), node("charge", "guard", { branchIndex: 0 }), node("note", "guard", { branchIndex: 1 }),
    ];
    const model = runModel({ ...data("completed", nodes), blocks } as InstanceDetailData);
    expect(Object.fromEntries(model.armLabel)).toEqual({ a: "branch 1", b: "branch 2", charge: "try", note: "catch" });
  });

  it("tells a caught failure from the one that failed the run", () => {
    const nodes = [
      node("guard", null, { blockType: "try_catch", state: "completed" }),
      node("charge", "guard", { branchIndex: 0, state: "failed", error: err, attempts: [attempt(0, 0, 50, { error: err })] }),
      node("note", "guard", { branchIndex: 1, state: "completed", attempts: [attempt(0, 60, 61)] }),
      node("last", null, { state: "failed", error: err, attempts: [attempt(0, 100, 120, { error: err })] }),
    ];
    const model = runModel(data("failed", nodes));
    expect(model.failures.map((f) => [f.node.blockId, f.caughtBy?.blockId ?? null])).toEqual([["charge", "guard"], ["last", null]]);
    expect(model.timing.get("charge")).toEqual({ start: T0, end: T0 + 50, live: false, liveSince: null });
    expect(model.depth.get("note")).toBe(1);
    expect(model.started).toBe(true);
  });

  it("a failure in the catch arm, or under a try_catch that failed, was not caught", () => {
    const nodes = [
      node("guard", null, { blockType: "try_catch", state: "failed" }),
      node("charge", "guard", { branchIndex: 0, state: "failed", error: err }),
      node("note", "guard", { branchIndex: 1, state: "failed", error: err }),
    ];
    expect(runModel(data("failed", nodes)).failures.every((f) => f.caughtBy === null)).toBe(true);
  });

  it("an open attempt is live, even while the tree still says pending; not once the instance finished", () => {
    const open = [node("nap", null, { state: "pending", attempts: [attempt(0, 1_000, null)] })];
    const running = runModel(data("running", open));
    expect(running.timing.get("nap")).toMatchObject({ start: T0 + 1_000, end: null, live: true, liveSince: T0 + 1_000 });
    expect(running.live).toBe(true);
    expect(runModel(data("cancelled", open)).live).toBe(false);
  });

  it("nothing started: no attempts, no outputs", () => {
    const model = runModel(data("scheduled", [node("a", null), node("b", null)]));
    expect(model.started).toBe(false);
    expect(model.live).toBe(false);
  });

  it("keeps each block's latest real output, never a marker row", () => {
    const model = runModel(
      data("completed", [node("a", null)], [
        { blockId: "a", output: { v: 1 } },
        { blockId: "a", output: { v: 2 } },
        { blockId: "a", output: { __error__: true, message: "x" }, outputRef: "__error__" },
        { blockId: "a", outputRef: "__in_progress__" },
      ]),
    );
    expect(model.latestOutput.get("a")?.output).toEqual({ v: 2 });
  });

  it("takes one pass over thousands of nodes", () => {
    const nodes: DetailNode[] = [node("loop", null, { blockType: "for_each", state: "running" })];
    for (let i = 0; i < 5_000; i++) {
      nodes.push(node(`s${i}`, "loop", { state: "completed", attempts: [attempt(0, i, i + 5)], completedAt: at(i + 5) }));
    }
    const started = performance.now();
    const model = runModel(data("running", nodes));
    expect(performance.now() - started).toBeLessThan(200);
    expect(model.leaves).toHaveLength(5_000);
    expect(model.children.get("loop")).toHaveLength(5_000);
  });
});

describe("run-format", () => {
  it("durations", () => {
    expect([340, 1_234, 12_400, 192_000, 7_500_000].map(formatDuration)).toEqual(["340 ms", "1.2 s", "12 s", "3 min 12 s", "2 h 5 min"]);
  });

  it("attempts, also past the policy after a manual retry", () => {
    expect(attemptOf(2, 3)).toBe("attempt 3 of 3");
    expect(attemptOf(0, null)).toBe("attempt 1");
    expect(attemptOf(3, 3)).toMatch(/^attempt 4 \(its retry policy allows 3/);
    expect(attemptsSummary(node("a", null, { maxAttempts: 3, attempts: [attempt(0, 0, 1), attempt(1, 2, 3)] }))).toBe("2 attempts (up to 3 allowed)");
    expect(attemptsSummary(node("a", null, { maxAttempts: 3, attempts: [attempt(3, 0, 1)] }))).toBe("1 attempt in this run (attempt 4 in all; up to 3 allowed)");
  });

  it("an __error__ row reads as its message", () => {
    expect(errorOutputMessage("__error__", { __error__: true, retryable: false, message: "boom" })).toBe("boom");
    expect(errorOutputMessage(null, { __error__: true, message: "boom" })).toBe("boom");
    expect(errorOutputMessage(null, { ok: true })).toBeNull();
  });
});
