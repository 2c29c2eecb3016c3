// What the operator console's tenants table reads, as `storage.directory`: tenants a keyset page
// at a time (control plane, primary), and for the tenants shown their minutes of tenant_metrics
// and their Open breakers, each read from the backend the tenant is placed on now. The pools stay
// in here.
import type { MetricRow } from "../metrics/tenant-metrics.ts";
import type { StorageBackends } from "./backends.ts";
import { countOpenBreakersOf } from "./breakers.ts";
import { readTenantMetricsOf } from "./metrics.ts";
import { readTenantActivity } from "./tenant-activity.ts";
import {
  countDirectory, directoryRowsOf, listDirectoryPage, matchingPlacementsOf, type DirectoryQuery, type DirectoryRow,
} from "./tenant-directory.ts";

export interface TenantActivity {
  tenantId: string;
  backendId: string;
  claimed: number;
  lagBuckets: number[];
}

export class TenantDirectory {
  constructor(private readonly backends: StorageBackends) {}

  private get primary() {
    return this.backends.primary.pool;
  }

  page(query: DirectoryQuery): Promise<DirectoryRow[]> {
    return listDirectoryPage(this.primary, query);
  }

  count(search: string): Promise<number> {
    return countDirectory(this.primary, search);
  }

  /** These tenants, those that exist (and match `search`). */
  rowsOf(ids: readonly string[], search = ""): Promise<DirectoryRow[]> {
    return directoryRowsOf(this.primary, ids, search);
  }

  /** Of these tenants, those matching the search, with the backend each is placed on. */
  placementsMatching(ids: readonly string[], search: string): Promise<Map<string, string | null>> {
    return matchingPlacementsOf(this.primary, ids, search);
  }

  /**
   * Every tenant's claims and lag histogram over the hour from `from` on, from every registered
   * backend's one row per tenant (tenant_activity_hour), each with the backend it came from: the
   * caller keeps a row only where its tenant is placed now (a move leaves a copy of its minutes
   * behind until cleanup).
   */
  async activityOfEveryTenant(from: Date): Promise<TenantActivity[]> {
    const perBackend = await Promise.all(
      this.backends.ids().map(async (backendId) =>
        (await readTenantActivity(this.backends.get(backendId).pool, from)).map((row) => ({ ...row, backendId })),
      ),
    );
    return perBackend.flat();
  }

  /**
   * For tenants by the backend they are placed on: their minutes in [from, to) and their Open
   * breaker counts, read from that backend only. A backend this process does not serve is left
   * out (its tenants get no figures).
   */
  async figuresOf(tenantsByBackend: ReadonlyMap<string, readonly string[]>, from: Date, to: Date): Promise<{ metrics: MetricRow[]; openBreakers: Map<string, number>; served: Set<string> }> {
    const served = [...tenantsByBackend].filter(([backendId]) => this.backends.has(backendId));
    const read = await Promise.all(
      served.map(async ([backendId, ids]) => {
        const pool = this.backends.get(backendId).pool;
        const [metrics, breakers] = await Promise.all([readTenantMetricsOf(pool, ids, from, to), countOpenBreakersOf(pool, ids)]);
        return { metrics, breakers };
      }),
    );
    return {
      metrics: read.flatMap((r) => r.metrics),
      openBreakers: new Map(read.flatMap((r) => [...r.breakers])),
      served: new Set(served.flatMap(([, ids]) => ids)),
    };
  }
}
