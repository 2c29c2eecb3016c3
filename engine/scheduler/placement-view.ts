// What the schedulers of one process know of tenant placements: a copy of the placements table
// (on the primary), refreshed on a timer, so the claim loop never waits on the control plane.
// A scheduler claims only tenants placed on its backend and not quiesced for a move; a tenant
// with no placement is served by nobody (fail closed).
import type pg from "pg";
import type { Logger } from "../logger.ts";
import { listPlacements, type Placement } from "../storage/placements.ts";

type Queryable = Pick<pg.Pool, "query">;

export class PlacementView {
  private placements = new Map<string, Placement>();
  /** claimable() per backend, computed once per refresh. */
  private claimableBy = new Map<string, string[]>();
  private timer: NodeJS.Timeout | null = null;
  private loaded = false;

  constructor(
    private readonly primary: Queryable,
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
      this.placements = new Map((await listPlacements(this.primary)).map((p) => [p.tenantId, p]));
      this.claimableBy = new Map();
      this.loaded = true;
    } catch (error) {
      // Keep the last copy: a control-plane blip must not stop every tenant's work.
      this.log.warn({ err: error }, "could not refresh tenant placements");
    }
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

  isQuiesced(tenantId: string): boolean {
    return (this.placements.get(tenantId)?.quiescedAt ?? null) !== null;
  }
}
