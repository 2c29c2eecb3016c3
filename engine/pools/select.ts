// Which resource of a pool serves the next assignment (wire-format U's selection rules). Pure:
// the caller reads the pool and its resources, and persists what it is given back (the next
// round-robin index, the chosen resource's usage). Nothing calls it yet: U keeps pools CRUD-only,
// as Orch8 does, so no step takes a resource from a pool.
import type { PoolStrategy } from "../storage/index.ts";

/** A calendar day, `YYYY-MM-DD` (UTC), as U prints `daily_usage_date` and `warmup_start`. */
export type Day = string;

/** What selection reads of a resource (PoolResourceRecord has these fields). */
export interface SelectableResource {
  /** At least 1 (the API refuses less). */
  weight: number;
  enabled: boolean;
  /** 0 = unlimited. */
  dailyCap: number;
  /** Assignments on `dailyUsageDate`; on any other day there were none yet. */
  dailyUsage: number;
  dailyUsageDate: Day | null;
  warmupStart: Day | null;
  /** 0 = no ramp. */
  warmupDays: number;
  warmupStartCap: number;
}

export type Selection<R> =
  /** `roundRobinIndex` is the pool's index to store (advanced by round_robin only). */
  | { outcome: "assigned"; resource: R; roundRobinIndex: number }
  /** No enabled resource (or none at all). */
  | { outcome: "empty" }
  /** Enabled resources, every one at its capacity today. */
  | { outcome: "exhausted" };

export interface SelectOptions {
  strategy: PoolStrategy;
  roundRobinIndex: number;
  today: Day;
  /** Uniform in [0, 1); Math.random by default. Tests pass their own. */
  random?: () => number;
}

/** round_robin_index and the counters are u32 on the wire: the index wraps as a u32 does. */
const U32 = 2 ** 32;

/** The UTC day of `date`: usage counts per UTC day. */
export const utcDay = (date: Date): Day => date.toISOString().slice(0, 10);

/** Days since 1970-01-01. setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999. */
function dayNumber(day: Day): number {
  const date = new Date(0);
  date.setUTCFullYear(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10)));
  return Math.round(date.getTime() / 86_400_000);
}

/**
 * How many assignments the resource may take on `today`; null = unlimited (daily_cap 0, ramp or
 * not). With a warm-up (warmup_start and warmup_days set) the cap climbs linearly from
 * warmup_start_cap on the start day (and before it) to daily_cap on day warmup_days, rounded
 * down. Where U is silent: a ramp at 0 today is no capacity (Orch8's code reads a computed 0 as
 * "unlimited"), and a start cap above daily_cap is held to daily_cap, the most a resource takes
 * on any day.
 */
export function dailyCapacity(resource: SelectableResource, today: Day): number | null {
  const cap = resource.dailyCap;
  if (cap === 0) return null;
  if (resource.warmupStart === null || resource.warmupDays === 0) return cap;
  const days = Math.max(0, dayNumber(today) - dayNumber(resource.warmupStart));
  if (days >= resource.warmupDays) return cap;
  const start = Math.min(resource.warmupStartCap, cap);
  // BigInt: (cap - start) * days can pass 2^53 for u32 values.
  return start + Number((BigInt(cap - start) * BigInt(days)) / BigInt(resource.warmupDays));
}

/** Assignments so far on `today`: the counter resets when the day changes. */
export const usageOn = (resource: SelectableResource, today: Day): number => (resource.dailyUsageDate === today ? resource.dailyUsage : 0);

export function hasCapacity(resource: SelectableResource, today: Day): boolean {
  const cap = dailyCapacity(resource, today);
  return cap === null || usageOn(resource, today) < cap;
}

/** The chosen resource's counters after one more assignment on `today` (a new day starts at 1). */
export function recordUse(resource: SelectableResource, today: Day): { dailyUsage: number; dailyUsageDate: Day } {
  return { dailyUsage: Math.min(usageOn(resource, today) + 1, U32 - 1), dailyUsageDate: today };
}

/** An index in [0, n) from a draw in [0, 1), held in range whatever the draw. */
const indexOf = (draw: number, n: number) => Math.min(n - 1, Math.max(0, Math.floor(draw * n)));

/**
 * The next resource by the pool's strategy, among the enabled resources with capacity today, in
 * the order given (the API lists a pool's resources by name): round_robin takes the
 * index-th (modulo how many are available) and advances the index; weighted draws in proportion
 * to weight; random draws uniformly.
 */
export function selectResource<R extends SelectableResource>(resources: readonly R[], options: SelectOptions): Selection<R> {
  const enabled = resources.filter((resource) => resource.enabled);
  if (enabled.length === 0) return { outcome: "empty" };
  const available = enabled.filter((resource) => hasCapacity(resource, options.today));
  if (available.length === 0) return { outcome: "exhausted" };
  const random = options.random ?? Math.random;
  const index = options.roundRobinIndex;
  switch (options.strategy) {
    case "round_robin":
      return { outcome: "assigned", resource: available[index % available.length]!, roundRobinIndex: (index + 1) % U32 };
    case "weighted": {
      const weights = available.map((resource) => Math.max(0, Math.floor(resource.weight)));
      const total = weights.reduce((sum, weight) => sum + weight, 0);
      // Weights are at least 1, so total > 0: a draw lands in exactly one resource's share.
      let draw = total > 0 ? indexOf(random(), total) : 0;
      for (const [i, weight] of weights.entries()) {
        if (draw < weight) return { outcome: "assigned", resource: available[i]!, roundRobinIndex: index };
        draw -= weight;
      }
      return { outcome: "assigned", resource: available[0]!, roundRobinIndex: index };
    }
    case "random":
      return { outcome: "assigned", resource: available[indexOf(random(), available.length)]!, roundRobinIndex: index };
  }
}
