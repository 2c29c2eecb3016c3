import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { lazyChild } from "./logger.ts";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { log: pino({ level: "info" }, sink), lines };
}

describe("lazyChild", () => {
  it("makes the child on first use only, and its lines carry the bindings", () => {
    const { log, lines } = capture();
    const child = vi.spyOn(log, "child");
    const lazy = lazyChild(log, { tenant_id: "t-1", instance_id: "i-1" });
    expect(child).not.toHaveBeenCalled();
    lazy.info({ step: "a" }, "hello");
    lazy.warn("again");
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ tenant_id: "t-1", instance_id: "i-1", step: "a", msg: "hello", level: 30 });
    expect(lines[1]).toMatchObject({ tenant_id: "t-1", msg: "again", level: 40 });
  });

  it("nests: a lazy child of a lazy child has both bindings, and levels are the parent's", () => {
    const { log, lines } = capture();
    const step = lazyChild(lazyChild(log, { instance_id: "i-1" }), { block_id: "b" });
    step.debug("not written at info");
    expect(step.isLevelEnabled("debug")).toBe(false);
    step.error("written");
    expect(lines).toEqual([expect.objectContaining({ instance_id: "i-1", block_id: "b", msg: "written" })]);
  });
});
