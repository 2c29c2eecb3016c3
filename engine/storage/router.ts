// TenantPartitionRouter: the only way from a tenant id to the database that holds its rows.
import { notFound } from "../errors.ts";
import type { Backend, StorageBackends } from "./backends.ts";
import { readPlacement } from "./placements.ts";

export interface Route {
  backend: Backend;
  epoch: number;
  /** The tenant is being moved: reads are served, writes must wait (503, Retry-After). */
  quiesced: boolean;
}

export class TenantPartitionRouter {
  constructor(private readonly backends: StorageBackends) {}

  /**
   * Fails closed: a tenant without a placement is NotFound (the same answer as a tenant that does
   * not exist), a placement on a backend this process did not register is Unsupported. There is
   * no default backend.
   */
  async route(tenantId: string): Promise<Route> {
    const placement = await readPlacement(this.backends.primary.pool, tenantId);
    if (!placement) throw notFound("tenant");
    return { backend: this.backends.get(placement.backendId), epoch: placement.epoch, quiesced: placement.quiescedAt !== null };
  }
}
