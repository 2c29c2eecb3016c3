// What the schedulers of one process know of tenants from the control plane (the primary): the
// placements and the operators' per-tenant limits, copied and refreshed on a timer, so the claim
// loop never waits on the control plane.
// A scheduler claims only tenants placed on its backend and not quiesced for a move; a tenant
// with no placement is served by nobody (fail closed).
import type { Logger } from "../logger.ts";
import type { Placement, Storage, TenantLimits } from "../storage/index.ts";

export class TenantView {
  private placements = new Map<string, Placement>();
  private limits = new Map<string, TenantLimits>();
  private caps: [string, number][] = [];
  /** claimable() per backend, computed once per refresh. */
  private claimableBy = new Map<string, string[]>();
  private timer: NodeJS.Timeout | null = null;
  private loaded = false;
  /** What a scheduler claims by (placements, quiescing, limits), to tell a refresh that changed it. */
  private claimBasis = "";
  /** The control plane's version the copy was read at: a refresh reads the tables only when it moved. */
  private version: string | null = null;
  private readonly changeListeners = new Set<() => void>();

  constructor(
    private readonly controlPlane: Pick<Storage, "controlPlaneVersion" | "listPlacements" | "listTenantLimits">,
    private readonly log: Logger,
    /** How stale a placement change may be when a scheduler acts on it. */
    readonly refreshMs = 500,
  ) {}

  /** Loads the placements once (a scheduler claims nothing before), then keeps them fresh. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async refresh(): Promise<void> {
    try {
      // Read before the tables (see readControlPlaneVersion), so the copy is at least this new.
      const version = await this.controlPlane.controlPlaneVersion();
      if (version === this.version) return;
      const [placements, limits] = await Promise.all([this.controlPlane.listPlacements(), this.controlPlane.listTenantLimits()]);
      this.version = version;
      this.placements = new Map(placements.map((p) => [p.tenantId, p]));
      this.limits = limits;
      this.caps = [...limits].filter(([, l]) => l.claimCap !== null).map(([tenantId, l]) => [tenantId, l.claimCap!]);
      this.claimableBy = new Map();
      this.loaded = true;
      const basis = claimBasisOf(placements, limits);
      if (basis !== this.claimBasis) {
        this.claimBasis = basis;
        for (const listener of this.changeListeners) listener();
      }
    } catch (error) {
      // Keep the last copy: a control-plane blip must not stop every tenant's work.
      this.log.warn({ err: error }, "could not refresh tenant placements");
    }
  }

  /**
   * Calls `listener` after each refresh that changed what schedulers claim by: a tenant placed,
   * moved, quiesced or resumed, or its limits changed. Idle schedulers claim again then, as no
   * due notice says so. Returns the unsubscribe.
   */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** The tenants a scheduler of `backendId` may claim for: placed there, not quiesced. */
  claimable(backendId: string): string[] {
    if (!this.loaded) return [];
    let tenants = this.claimableBy.get(backendId);
    if (!tenants) {
      tenants = [...this.placements.values()].filter((p) => p.backendId === backendId && p.quiescedAt === null).map((p) => p.tenantId);
      this.claimableBy.set(backendId, tenants);
    }
    return tenants;
  }

  /** Whether `tenantId` is placed on `backendId` (quiesced or not): its running steps may finish there. */
  isPlacedOn(tenantId: string, backendId: string): boolean {
    return this.placements.get(tenantId)?.backendId === backendId;
  }

  /** The operators' overrides for the tenant, if any. */
  limitsOf(tenantId: string): TenantLimits | undefined {
    return this.limits.get(tenantId);
  }

  /** Every claim-cap override: [tenant, cap] pairs for the claim statement. */
  claimCaps(): readonly [string, number][] {
    return this.caps;
  }

  /** Where the tenant is placed, and whether it is quiesced for a move; undefined when unplaced. */
  placementOf(tenantId: string): Placement | undefined {
    return this.placements.get(tenantId);
  }

  isQuiesced(tenantId: string): boolean {
    return (this.placements.get(tenantId)?.quiescedAt ?? null) !== null;
  }
}

function claimBasisOf(placements: readonly Placement[], limits: ReadonlyMap<string, TenantLimits>): string {
  const placed = placements.map((p) => `${p.tenantId}@${p.backendId}${p.quiescedAt === null ? "" : "!"}`).sort().join(",");
  const limited = [...limits].map(([tenantId, l]) => `${tenantId}:${l.maxConcurrency ?? ""}/${l.claimCap ?? ""}`).sort().join(",");
  return `${placed};${limited}`;
}
