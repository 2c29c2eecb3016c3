// engine/storage: the only module that reads or writes tenant data. A caller gets at a tenant's
// rows only through `storage.tenant(id)`, which routes the id through the partition router
// (failing closed) and binds every statement to that tenant.
import { AppError } from "../errors.ts";
import type { Backend, StorageBackends } from "./backends.ts";
import { countInstancesByState } from "./instances.ts";
import { advanceTenantPlacement, listPlacements, type Placement } from "./placements.ts";
import { TenantPartitionRouter } from "./router.ts";
import { insertSequence, listSequences, type NewSequence } from "./sequences.ts";

export { StorageBackends } from "./backends.ts";
export type { Placement } from "./placements.ts";
export type { NewSequence, SequenceSummary } from "./sequences.ts";
export { INSTANCE_STATES, type InstanceState } from "./instances.ts";

/** One tenant's rows on the backend its placement names. */
export class TenantStore {
  constructor(
    readonly tenantId: string,
    readonly backend: Backend,
    /** The placement epoch this store was routed with. */
    readonly epoch: number,
  ) {}

  countInstancesByState() {
    return countInstancesByState(this.backend.pool, this.tenantId);
  }

  insertSequence(sequence: NewSequence) {
    return insertSequence(this.backend.pool, this.tenantId, sequence);
  }

  listSequences() {
    return listSequences(this.backend.pool, this.tenantId);
  }
}

export class Storage {
  readonly router: TenantPartitionRouter;

  constructor(readonly backends: StorageBackends) {
    this.router = new TenantPartitionRouter(backends);
  }

  async tenant(tenantId: string): Promise<TenantStore> {
    const { backend, epoch } = await this.router.route(tenantId);
    return new TenantStore(tenantId, backend, epoch);
  }

  advanceTenantPlacement(tenantId: string, backendId: string, epoch: number): Promise<Placement> {
    // Only to a backend this process can serve: an unknown id is a typo, not a plan.
    if (!this.backends.has(backendId)) {
      return Promise.reject(new AppError("invalid_argument", `backend "${backendId.slice(0, 128)}" is not registered`, ["backend_id"]));
    }
    return advanceTenantPlacement(this.backends.primary.pool, tenantId, backendId, epoch);
  }

  listPlacements(): Promise<Placement[]> {
    return listPlacements(this.backends.primary.pool);
  }

  close(): Promise<void> {
    return this.backends.close();
  }
}
