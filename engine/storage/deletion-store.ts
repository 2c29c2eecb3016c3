// What a tenant deletion (engine/lifecycle) reads and writes, as `storage.deletions`: its record
// and the placement on the primary, and the tenant's rows on every backend. The pools stay in here.
import type { StorageBackends } from "./backends.ts";
import {
  activeDeletion, advanceDeletion, deleteControlPlaneRows, deleteTenantRowsInBatches, exportDirsOf, getDeletion, insertDeletion, listActiveDeletions,
  recordDeletionError, type DeletionPhase, type DeletionRecord,
} from "./deletions.ts";
import { asTenantId } from "./ids.ts";
import { runningInstances } from "./tenant-rows.ts";

export class DeletionStore {
  constructor(private readonly backends: StorageBackends) {}

  private get primary() {
    return this.backends.primary.pool;
  }

  active(tenantId: string): Promise<DeletionRecord | null> {
    return activeDeletion(this.primary, tenantId);
  }

  get(id: string): Promise<DeletionRecord | null> {
    return getDeletion(this.primary, id);
  }

  listActive(): Promise<DeletionRecord[]> {
    return listActiveDeletions(this.primary);
  }

  /** Records a new deletion (phase quiesce) and its audit line; a conflict when one is under way. */
  insert(deletion: { tenantId: string; backendId: string; epoch: number; requestedBy: string }): Promise<DeletionRecord> {
    return insertDeletion(this.primary, deletion);
  }

  advance(id: string, phase: DeletionPhase, detail?: Record<string, unknown>): Promise<DeletionRecord> {
    return advanceDeletion(this.primary, id, phase, detail);
  }

  recordError(id: string, message: string): Promise<void> {
    return recordDeletionError(this.primary, id, message);
  }

  /** Instances of the tenant still running on `backendId` (expired leases handed back first). */
  running(backendId: string, tenantId: string, now: Date): Promise<number> {
    return runningInstances(this.backends.get(backendId).pool, asTenantId(tenantId), now);
  }

  /** Every backend this process serves: a tenant's rows may be left on one it was once placed on. */
  backendIds(): string[] {
    return this.backends.ids();
  }

  /** Deletes the tenant's rows on `backendId` in batches; rows per table. */
  deleteRows(backendId: string, tenantId: string, onBatch?: (table: string, rows: number) => void | Promise<void>): Promise<Record<string, number>> {
    return deleteTenantRowsInBatches(this.backends.get(backendId).pool, asTenantId(tenantId), onBatch);
  }

  /** The directories of the tenant's console exports. */
  exportDirs(tenantId: string): Promise<string[]> {
    return exportDirsOf(this.primary, tenantId);
  }

  /** The tenant's control-plane rows and the tenant itself, in one transaction that also marks the deletion done. */
  deleteControlPlane(deletion: DeletionRecord): Promise<DeletionRecord> {
    return deleteControlPlaneRows(this.primary, deletion);
  }
}
