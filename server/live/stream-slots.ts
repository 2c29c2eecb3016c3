// The live streams a web process holds open (wire-format S: 256 per process), and of them one
// tenant's: each stream polls the database every poll_ms for as long as it is open, so one
// tenant's dashboards left open must not take every stream, nor that much database time.
export class StreamSlots {
  private total = 0;
  private readonly byTenant = new Map<string, number>();

  constructor(
    private readonly perProcess: number,
    private readonly perTenant: number,
  ) {}

  /** A slot for one of the tenant's streams, released by the function returned; null when none is free. */
  take(tenantId: string): (() => void) | null {
    const held = this.byTenant.get(tenantId) ?? 0;
    if (this.total >= this.perProcess || held >= this.perTenant) return null;
    this.total += 1;
    this.byTenant.set(tenantId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.byTenant.get(tenantId) ?? 1) - 1;
      if (left === 0) this.byTenant.delete(tenantId);
      else this.byTenant.set(tenantId, left);
    };
  }

  /** Streams open now: in all, and the tenant's. */
  open(tenantId?: string): number {
    return tenantId === undefined ? this.total : (this.byTenant.get(tenantId) ?? 0);
  }
}
