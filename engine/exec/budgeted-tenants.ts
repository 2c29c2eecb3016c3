// Which tenants on a backend have a budget, so pre-flight skips the budget statement for all the
// others (most tenants, on the hot path). The scheduler's reaper refreshes it; until the first
// refresh every tenant is asked.
import type { BackendStore } from "../storage/index.ts";

export class BudgetedTenants {
  private tenants: ReadonlySet<string> | null = null;

  has(tenantId: string): boolean {
    return this.tenants === null || this.tenants.has(tenantId);
  }

  async refresh(store: Pick<BackendStore, "listBudgetedTenants">): Promise<void> {
    this.tenants = await store.listBudgetedTenants();
  }
}
