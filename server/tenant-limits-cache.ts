// The operators' per-tenant limits as a web process sees them: all of tenant_limits (a row only
// for tenants with an override), read again at most once a second and only when asked for. Only
// the first request of a process waits for the read; later ones use the copy while it refreshes.
import { createLogger } from "../engine/logger.ts";
import type { TenantLimits } from "../engine/storage/index.ts";
import type { Services } from "./services.ts";

export const LIMITS_MAX_AGE_MS = 1_000;

export class TenantLimitsCache {
  private limits = new Map<string, TenantLimits>();
  private readAt: number | null = null;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly load: () => Promise<Map<string, TenantLimits>>,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  /** The tenant's own limits; undefined: it has none (every default applies). */
  async of(tenantId: string): Promise<TenantLimits | undefined> {
    if (this.readAt === null) await this.refresh();
    else if (this.now() - this.readAt >= LIMITS_MAX_AGE_MS) void this.refresh();
    return this.limits.get(tenantId);
  }

  /** The next request reads tenant_limits again first (this process just changed it). */
  invalidate(): void {
    this.readAt = null;
  }

  private refresh(): Promise<void> {
    this.reading ??= this.load()
      .then((limits) => {
        this.limits = limits;
      })
      // A failed read keeps the last copy (none at first: the defaults) and is tried again a second later.
      .catch(this.onError)
      .finally(() => {
        this.readAt = this.now();
        this.reading = null;
      });
    return this.reading;
  }
}

// On globalThis, like the request rate's buckets: every bundle of the web server shares one copy.
const REGISTRY = Symbol.for("bulkhead.tenantLimits");

/** The process's copy of tenant_limits for `services`. */
export function tenantLimitsCache(services: Services): TenantLimitsCache {
  const global = globalThis as { [REGISTRY]?: WeakMap<Services, TenantLimitsCache> };
  const caches = (global[REGISTRY] ??= new WeakMap());
  let cache = caches.get(services);
  if (!cache) {
    const log = createLogger("tenant-limits", services.config.BULKHEAD_LOG_LEVEL);
    cache = new TenantLimitsCache(() => services.storage.listTenantLimits(), (error) => log.error({ err: error }, "could not read tenant limits"));
    caches.set(services, cache);
  }
  return cache;
}
