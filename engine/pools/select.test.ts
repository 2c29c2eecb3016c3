// The selection rules of wire-format U: capacity (daily cap, warm-up ramp, the daily reset), the
// three strategies, and "empty" / "exhausted".
import { describe, expect, it } from "vitest";
import { dailyCapacity, hasCapacity, recordUse, selectResource, usageOn, utcDay, type SelectableResource } from "./select.ts";

type Resource = SelectableResource & { key: string };

const resource = (key: string, fields: Partial<SelectableResource> = {}): Resource => ({
  key, weight: 1, enabled: true, dailyCap: 0, dailyUsage: 0, dailyUsageDate: null, warmupStart: null, warmupDays: 0, warmupStartCap: 0, ...fields,
});

const TODAY = "2026-03-10";
/** Draws that return the given values in turn. */
const draws = (...values: number[]) => {
  let next = 0;
  return () => values[next++ % values.length]!;
};
const picked = (selection: ReturnType<typeof selectResource<Resource>>) => (selection.outcome === "assigned" ? selection.resource.key : selection.outcome);

describe("dailyCapacity", () => {
  it("is unlimited (null) for daily_cap 0, ramp or not, and daily_cap without a ramp", () => {
    expect(dailyCapacity(resource("a"), TODAY)).toBeNull();
    expect(dailyCapacity(resource("a", { warmupStart: TODAY, warmupDays: 10, warmupStartCap: 5 }), TODAY)).toBeNull();
    expect(dailyCapacity(resource("a", { dailyCap: 100 }), TODAY)).toBe(100);
    // A ramp needs both a start and a length.
    expect(dailyCapacity(resource("a", { dailyCap: 100, warmupDays: 10, warmupStartCap: 10 }), TODAY)).toBe(100);
    expect(dailyCapacity(resource("a", { dailyCap: 100, warmupStart: TODAY, warmupStartCap: 10 }), TODAY)).toBe(100);
  });

  it("ramps linearly from warmup_start_cap to daily_cap over warmup_days, rounded down", () => {
    const ramp = resource("a", { dailyCap: 100, warmupStart: "2026-03-01", warmupDays: 10, warmupStartCap: 10 });
    expect(dailyCapacity(ramp, "2026-03-01")).toBe(10);
    expect(dailyCapacity(ramp, "2026-03-02")).toBe(19);
    expect(dailyCapacity(ramp, "2026-03-06")).toBe(55);
    expect(dailyCapacity(ramp, "2026-03-10")).toBe(91);
    expect(dailyCapacity(ramp, "2026-03-11")).toBe(100);
    expect(dailyCapacity(ramp, "2027-01-01")).toBe(100);
    // Before the start day: the start cap.
    expect(dailyCapacity(ramp, "2026-02-01")).toBe(10);
    // Across a month and a leap day: calendar days.
    const leap = resource("b", { dailyCap: 29, warmupStart: "2028-02-01", warmupDays: 29, warmupStartCap: 0 });
    expect(dailyCapacity(leap, "2028-02-29")).toBe(28);
    expect(dailyCapacity(leap, "2028-03-01")).toBe(29);
  });

  it("holds a start cap above daily_cap to daily_cap, and a ramp at 0 today is no capacity", () => {
    expect(dailyCapacity(resource("a", { dailyCap: 20, warmupStart: TODAY, warmupDays: 5, warmupStartCap: 50 }), TODAY)).toBe(20);
    const fromZero = resource("a", { dailyCap: 10, warmupStart: TODAY, warmupDays: 20, warmupStartCap: 0 });
    expect(dailyCapacity(fromZero, TODAY)).toBe(0);
    expect(hasCapacity(fromZero, TODAY)).toBe(false);
  });

  it("is exact for the largest u32 values", () => {
    const max = 4_294_967_295;
    const huge = resource("a", { dailyCap: max, warmupStart: "0001-01-01", warmupDays: max, warmupStartCap: 0 });
    // 738,945 days from 0001-01-01: floor(max * days / max) = days.
    expect(dailyCapacity(huge, "2024-03-01")).toBe(738_945);
  });
});

describe("usage", () => {
  it("counts on its own day only: a new day starts from 0", () => {
    const used = resource("a", { dailyCap: 10, dailyUsage: 10, dailyUsageDate: "2026-03-09" });
    expect(usageOn(used, "2026-03-09")).toBe(10);
    expect(hasCapacity(used, "2026-03-09")).toBe(false);
    expect(usageOn(used, TODAY)).toBe(0);
    expect(hasCapacity(used, TODAY)).toBe(true);
  });

  it("is below the cap to have capacity", () => {
    expect(hasCapacity(resource("a", { dailyCap: 10, dailyUsage: 9, dailyUsageDate: TODAY }), TODAY)).toBe(true);
    expect(hasCapacity(resource("a", { dailyCap: 10, dailyUsage: 10, dailyUsageDate: TODAY }), TODAY)).toBe(false);
    expect(hasCapacity(resource("a", { dailyUsage: 4_000_000, dailyUsageDate: TODAY }), TODAY)).toBe(true);
  });

  it("records one more use today, resetting on a new day", () => {
    expect(recordUse(resource("a", { dailyUsage: 3, dailyUsageDate: TODAY }), TODAY)).toEqual({ dailyUsage: 4, dailyUsageDate: TODAY });
    expect(recordUse(resource("a", { dailyUsage: 3, dailyUsageDate: "2026-03-09" }), TODAY)).toEqual({ dailyUsage: 1, dailyUsageDate: TODAY });
    expect(recordUse(resource("a"), TODAY)).toEqual({ dailyUsage: 1, dailyUsageDate: TODAY });
  });

  it("uses UTC days", () => {
    expect(utcDay(new Date("2026-03-10T23:59:59.999Z"))).toBe("2026-03-10");
    expect(utcDay(new Date("2026-03-11T00:30:00+02:00"))).toBe("2026-03-10");
  });
});

describe("selectResource", () => {
  const select = (resources: Resource[], strategy: "round_robin" | "weighted" | "random", roundRobinIndex = 0, random?: () => number) =>
    selectResource(resources, { strategy, roundRobinIndex, today: TODAY, random });

  it("is empty with no resources or none enabled, whatever the strategy", () => {
    for (const strategy of ["round_robin", "weighted", "random"] as const) {
      expect(select([], strategy)).toEqual({ outcome: "empty" });
      expect(select([resource("a", { enabled: false }), resource("b", { enabled: false })], strategy)).toEqual({ outcome: "empty" });
    }
  });

  it("is exhausted when every enabled resource is at its cap today (disabled ones do not count)", () => {
    const full = (key: string) => resource(key, { dailyCap: 2, dailyUsage: 2, dailyUsageDate: TODAY });
    for (const strategy of ["round_robin", "weighted", "random"] as const) {
      expect(select([full("a"), full("b")], strategy)).toEqual({ outcome: "exhausted" });
      expect(select([full("a"), resource("b", { enabled: false })], strategy)).toEqual({ outcome: "exhausted" });
      // Yesterday's usage is spent: today they are free again.
      expect(picked(select([resource("a", { dailyCap: 2, dailyUsage: 2, dailyUsageDate: "2026-03-09" })], strategy))).toBe("a");
    }
  });

  it("round_robin cycles by index over the available resources and advances the index", () => {
    const pool = [resource("a"), resource("b"), resource("c")];
    let index = 0;
    const keys: string[] = [];
    for (let i = 0; i < 6; i++) {
      const selection = select(pool, "round_robin", index);
      if (selection.outcome !== "assigned") throw new Error(selection.outcome);
      keys.push(selection.resource.key);
      index = selection.roundRobinIndex;
    }
    expect(keys).toEqual(["a", "b", "c", "a", "b", "c"]);
    expect(index).toBe(6);
    // Disabled and full resources are skipped: the index runs over what is available.
    const some = [resource("a"), resource("b", { enabled: false }), resource("c", { dailyCap: 1, dailyUsage: 1, dailyUsageDate: TODAY }), resource("d")];
    expect([0, 1, 2, 3].map((i) => picked(select(some, "round_robin", i)))).toEqual(["a", "d", "a", "d"]);
    // The index wraps as a u32.
    expect(select(pool, "round_robin", 4_294_967_295)).toMatchObject({ roundRobinIndex: 0 });
  });

  it("weighted picks in proportion to weight and leaves the index alone", () => {
    const pool = [resource("a", { weight: 1 }), resource("b", { weight: 3 }), resource("c", { weight: 6 })];
    // Total 10: draws [0, 0.1) → a, [0.1, 0.4) → b, [0.4, 1) → c.
    expect([0, 0.09, 0.1, 0.39, 0.4, 0.999999].map((draw) => picked(select(pool, "weighted", 7, () => draw)))).toEqual(["a", "a", "b", "b", "c", "c"]);
    expect(select(pool, "weighted", 7, () => 0.5)).toMatchObject({ roundRobinIndex: 7 });
    // A draw out of range still lands on a resource.
    expect(picked(select(pool, "weighted", 0, () => 1))).toBe("c");
    // Over many draws the shares follow the weights.
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    const steps = 10_000;
    for (let i = 0; i < steps; i++) counts[picked(select(pool, "weighted", 0, () => i / steps))]! += 1;
    expect(counts).toEqual({ a: 1_000, b: 3_000, c: 6_000 });
    // Only available resources share the draw.
    const capped = [resource("a", { weight: 9, dailyCap: 1, dailyUsage: 1, dailyUsageDate: TODAY }), resource("b", { weight: 1 })];
    expect(picked(select(capped, "weighted", 0, () => 0))).toBe("b");
  });

  it("random picks uniformly among the available resources", () => {
    const pool = [resource("a"), resource("b", { enabled: false }), resource("c"), resource("d")];
    expect([0, 0.33, 0.34, 0.66, 0.67, 0.99].map((draw) => picked(select(pool, "random", 3, () => draw)))).toEqual(["a", "a", "c", "c", "d", "d"]);
    expect(select(pool, "random", 3, draws(0.5))).toMatchObject({ roundRobinIndex: 3 });
    // Math.random by default: always one of the available ones.
    for (let i = 0; i < 100; i++) expect(["a", "c", "d"]).toContain(picked(select(pool, "random")));
  });

  it("honours the warm-up ramp when deciding capacity", () => {
    const warming = resource("a", { dailyCap: 100, warmupStart: TODAY, warmupDays: 10, warmupStartCap: 2, dailyUsage: 2, dailyUsageDate: TODAY });
    expect(select([warming], "round_robin")).toEqual({ outcome: "exhausted" });
    expect(picked(select([{ ...warming, dailyUsage: 1 }], "round_robin"))).toBe("a");
  });
});
