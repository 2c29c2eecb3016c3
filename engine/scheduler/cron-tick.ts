// The cron tick of one backend (wire-format M): every second, fire the due schedules of the
// tenants placed here. Any number of engine processes tick at once: each claim locks its
// schedules (SKIP LOCKED) until they have fired and advanced, so an occurrence fires once.
// Fair across tenants: every claim takes each due tenant's first schedule before anyone's
// second, and a tenant gets at most its fire rate per tick, so 10,000 schedules of one tenant
// due together cannot hold another tenant's single one past the first claim of the tick.
import type { Logger } from "../logger.ts";
import { BackendStore, type Backend, type CronFireResult, type NextFire } from "../storage/index.ts";
import { nextFireAfter, parseCron } from "./cron-expression.ts";
import type { TenantView } from "./tenant-view.ts";

export interface CronTickLimits {
  /** How often the tick runs (M: Bulkhead ticks every second, so a per-second schedule fires within 3 s). */
  tickMs: number;
  /** Schedules one claim takes (M: up to 100). */
  claimBatch: number;
  /** Of those, one tenant's at most (the round robin's share of one claim). */
  perTenantPerClaim: number;
  /** Fires of one tenant per tick and engine process: the ledger's fire rate. */
  firesPerTenantPerTick: number;
  /** Claims one tick makes at most, so a tick ends even while many tenants have work due. */
  claimsPerTick: number;
}

export const CRON_TICK_DEFAULTS: CronTickLimits = {
  tickMs: 1_000, claimBatch: 100, perTenantPerClaim: 25, firesPerTenantPerTick: 100, claimsPerTick: 20,
};

export interface CronTickDeps {
  backend: Backend;
  log: Logger;
  /** Which tenants are placed here and not being moved; absent: every tenant on the backend. */
  tenants?: Pick<TenantView, "claimable">;
  now?: () => Date;
  limits?: Partial<CronTickLimits>;
}

export interface CronTickResult {
  fired: CronFireResult["fired"];
  skipped: number;
  rearmed: number;
  failed: number;
  claims: number;
}

/** The next occurrence of a stored schedule: the expression was checked when it was written. */
export const nextCronFire: NextFire = (cronExpr, timezone, after) => nextFireAfter(parseCron(cronExpr), timezone, after);

export class CronTick {
  private readonly store: BackendStore;
  private readonly limits: CronTickLimits;
  private readonly now: () => Date;
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<unknown> | null = null;
  private stopped = false;

  constructor(private readonly deps: CronTickDeps) {
    this.store = new BackendStore(deps.backend);
    this.limits = { ...CRON_TICK_DEFAULTS, ...deps.limits };
    this.now = deps.now ?? (() => new Date());
  }

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.current = this.tick(this.now())
        .catch((error: unknown) => this.deps.log.warn({ err: error, backend_id: this.deps.backend.id }, "cron tick failed"))
        .finally(() => {
          this.current = null;
          if (!this.stopped) this.timer = setTimeout(loop, this.limits.tickMs);
        });
    };
    this.timer = setTimeout(loop, this.limits.tickMs);
  }

  /** No new tick starts; the one in flight finishes (its statements must not meet a closed pool). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.current;
  }

  /** One tick at `now`: claims until nothing due is left, every due tenant had its fires, or the claims run out. */
  async tick(now: Date): Promise<CronTickResult> {
    const result: CronTickResult = { fired: [], skipped: 0, rearmed: 0, failed: 0, claims: 0 };
    const onlyTenants = this.deps.tenants?.claimable(this.deps.backend.id);
    if (onlyTenants?.length === 0) return result;
    const firesOf = new Map<string, number>();
    const { claimBatch, perTenantPerClaim, firesPerTenantPerTick, claimsPerTick } = this.limits;
    while (result.claims < claimsPerTick) {
      const excludeTenants = [...firesOf].filter(([, n]) => n >= firesPerTenantPerTick).map(([tenant]) => tenant);
      const claim = await this.store.fireDueCronSchedules(
        {
          now, limit: claimBatch, excludeTenants, onlyTenants,
          perTenant: Math.min(perTenantPerClaim, firesPerTenantPerTick),
        },
        nextCronFire, this.deps.log,
      );
      result.claims += 1;
      result.fired.push(...claim.fired);
      result.skipped += claim.skipped;
      result.rearmed += claim.rearmed;
      result.failed += claim.failed;
      let claimed = 0;
      for (const [tenant, n] of claim.claimed) {
        firesOf.set(tenant, (firesOf.get(tenant) ?? 0) + n);
        claimed += n;
      }
      if (claimed === 0) break;
    }
    return result;
  }
}

/** Starts the backend's cron tick; the function returned stops it. */
export function startCronTick(deps: CronTickDeps): () => Promise<void> {
  const tick = new CronTick(deps);
  tick.start();
  return () => tick.stop();
}
