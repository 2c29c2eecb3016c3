// What the operator's fairness page reads, as `storage.fairness`: the tenant_metrics rollups of
// every registered backend (rollup-reads.ts), each tenant's figures only from the backend it is
// placed on now (a move leaves a copy behind until its cleanup), and the tenants' own lag
// objectives (control plane). The pools stay in here. A window of spans of one minute is the last
// hour: ranked from one row per tenant (tenant_activity_hour), its listed tenants from their minutes.
import type { StorageBackends } from "./backends.ts";
import { countOpenBreakersOf } from "./breakers.ts";
import { readTenantMetricsOf } from "./metrics.ts";
import type { MetricRow } from "../metrics/tenant-metrics.ts";
import type { Placement } from "./placements.ts";
import {
  rankHourActivity, rankTenants, readBackendMinutes, readTenantLines, spansOfMinutes, sumSpansOf,
  type BackendMinute, type BackendRanking, type RankedTenant, type RankOptions, type SpanWindow, type TenantMinuteLine, type TenantSpans,
} from "./rollup-reads.ts";

export type { BackendMinute, RankedTenant, SpanWindow, TenantMinuteLine, TenantSpans } from "./rollup-reads.ts";

/**
 * What the page reads: spans of `span` minutes from `from`, or with span 1 the hour that ends
 * with the current minute (`from` must be its first minute, activityWindowFrom) up to `to`.
 */
export type ReadWindow = (SpanWindow | { span: 1; from: Date }) & { to: Date };

/** A tenant of the ranking, with the backend it was read from. */
export type PlacedTenant = RankedTenant & { backendId: string };

export interface FleetRanking {
  tenants: number;
  breaches: number;
  claimed: number;
  demand: number;
  /** Each backend's top and breaches, together (the caller orders and cuts them). */
  top: PlacedTenant[];
  breached: PlacedTenant[];
}

export class FairnessStore {
  constructor(
    private readonly backends: StorageBackends,
    private readonly placements: () => Promise<Placement[]>,
  ) {}

  /** Tenant ids by the registered backend they are placed on. */
  async placedOn(): Promise<Map<string, string>> {
    return new Map((await this.placements()).map((p) => [p.tenantId, p.backendId]));
  }

  /** Every backend's tenants ranked over the window, each backend leaving out tenants placed elsewhere. */
  async rank(window: ReadWindow, options: Omit<RankOptions, "elsewhere">): Promise<FleetRanking> {
    const placed = await this.placedOn();
    const rankings = await Promise.all(this.backends.ids().map(async (backendId) => {
      const ranking = await this.rankOn(backendId, window, placed, options);
      const at = (t: RankedTenant): PlacedTenant => ({ ...t, backendId });
      return { ...ranking, top: ranking.top.map(at), breached: ranking.breached.map(at) };
    }));
    return {
      tenants: rankings.reduce((n, r) => n + r.tenants, 0),
      breaches: rankings.reduce((n, r) => n + r.breaches, 0),
      claimed: rankings.reduce((n, r) => n + r.claimed, 0),
      demand: rankings.reduce((n, r) => n + r.demand, 0),
      top: rankings.flatMap((r) => r.top),
      breached: rankings.flatMap((r) => r.breached),
    };
  }

  private async rankOn(backendId: string, window: ReadWindow, placed: ReadonlyMap<string, string>, options: Omit<RankOptions, "elsewhere">): Promise<BackendRanking> {
    const pool = this.backends.get(backendId).pool;
    const elsewhere = [...placed].filter(([, b]) => b !== backendId).map(([tenantId]) => tenantId);
    if (window.span !== 1) return rankTenants(pool, { span: window.span, from: window.from }, { ...options, elsewhere });
    // The hour's demand in all from the backend's minutes (its rows hold none per tenant).
    const [ranking, minutes] = await Promise.all([rankHourActivity(pool, window.from, { ...options, elsewhere }), readBackendMinutes(pool, window.from, window.to)]);
    return { ...ranking, demand: minutes.reduce((n, m) => n + m.demand, 0) };
  }

  /** These tenants' spans in the window summed (or their minutes, for the hour), and their Open breaker counts, each from its backend. */
  async detailsOf(tenantsByBackend: ReadonlyMap<string, readonly string[]>, window: ReadWindow): Promise<{ spans: TenantSpans[]; openBreakers: Map<string, number> }> {
    const read = await Promise.all([...tenantsByBackend].filter(([b]) => this.backends.has(b)).map(async ([backendId, ids]) => {
      const pool = this.backends.get(backendId).pool;
      const summed = async () => {
        if (window.span !== 1) return sumSpansOf(pool, ids, { span: window.span, from: window.from });
        const minutesOf = new Map<string, MetricRow[]>();
        for (const row of await readTenantMetricsOf(pool, ids, window.from, window.to)) minutesOf.set(row.tenantId, [...(minutesOf.get(row.tenantId) ?? []), row]);
        return [...minutesOf].map(([id, rows]) => spansOfMinutes(id, rows));
      };
      const [spans, breakers] = await Promise.all([summed(), countOpenBreakersOf(pool, ids)]);
      return { spans, breakers };
    }));
    return { spans: read.flatMap((r) => r.spans), openBreakers: new Map(read.flatMap((r) => [...r.breakers])) };
  }

  /** These tenants' minutes (claims, left waiting) in [from, to), each from its backend. */
  async linesOf(tenantsByBackend: ReadonlyMap<string, readonly string[]>, from: Date, to: Date): Promise<TenantMinuteLine[]> {
    const read = await Promise.all([...tenantsByBackend].filter(([b]) => this.backends.has(b)).map(([backendId, ids]) =>
      readTenantLines(this.backends.get(backendId).pool, ids, from, to)));
    return read.flat();
  }

  /** One tenant's minutes in [from, to) from the backend it is placed on. */
  minutesOf(backendId: string, tenantId: string, from: Date, to: Date): Promise<MetricRow[]> {
    return readTenantMetricsOf(this.backends.get(backendId).pool, [tenantId], from, to);
  }

  /** Every backend's minutes in [from, to), summed minute by minute, oldest first. */
  async backendMinutes(from: Date, to: Date): Promise<BackendMinute[]> {
    const read = await Promise.all(this.backends.ids().map((id) => readBackendMinutes(this.backends.get(id).pool, from, to)));
    const byMinute = new Map<number, BackendMinute>();
    for (const m of read.flat()) {
      const key = m.minute.getTime();
      const sum = byMinute.get(key);
      if (!sum) byMinute.set(key, { ...m });
      else {
        sum.claimed += m.claimed;
        sum.demand += m.demand;
        sum.backlog += m.backlog;
        sum.servedTenants += m.servedTenants;
        sum.servedSum += m.servedSum;
        sum.servedSquares += m.servedSquares;
      }
    }
    return [...byMinute.values()].sort((a, b) => a.minute.getTime() - b.minute.getTime());
  }

  /** The tenants' own lag p99 objectives in ms (tenant_limits, control plane); the rest keep the default. */
  async lagObjectives(): Promise<Map<string, number>> {
    const { rows } = await this.backends.primary.pool.query<{ tenant_id: string; lag_objective_ms: number }>({
      name: "list_lag_objectives",
      text: "SELECT tenant_id, lag_objective_ms FROM tenant_limits WHERE lag_objective_ms IS NOT NULL",
    });
    return new Map(rows.map((r) => [r.tenant_id, r.lag_objective_ms]));
  }
}
