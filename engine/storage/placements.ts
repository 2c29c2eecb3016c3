// SQL for tenant_storage_placements (control plane, on the primary backend).
import { AppError } from "../errors.ts";
import { BACKEND_ID_PATTERN } from "../config.ts";
import type { Queryable } from "./transaction.ts";

export interface Placement {
  tenantId: string;
  backendId: string;
  epoch: number;
  /** Set while a move copies the tenant's rows (see moves.ts): no writes, no new claims. */
  quiescedAt: Date | null;
}

export async function readPlacement(db: Queryable, tenantId: string): Promise<Placement | null> {
  const { rows } = await db.query<{ backend_id: string; epoch: number; quiesced_at: Date | null }>({
    name: "read_placement",
    text: "SELECT backend_id, epoch, quiesced_at FROM tenant_storage_placements WHERE tenant_id = $1",
    values: [tenantId],
  });
  const row = rows[0];
  return row ? { tenantId, backendId: row.backend_id, epoch: row.epoch, quiescedAt: row.quiesced_at } : null;
}

/**
 * The control plane's version: moved in the same transaction as any change to the placements or
 * the tenants' limits (a trigger), so a copy of them read after it is at least that new.
 */
export async function readControlPlaneVersion(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ version: string }>({ name: "read_control_plane_version", text: "SELECT version::text FROM control_plane_version" });
  return rows[0]!.version;
}

export async function listPlacements(db: Queryable): Promise<Placement[]> {
  const { rows } = await db.query<{ tenant_id: string; backend_id: string; epoch: number; quiesced_at: Date | null }>({
    name: "list_placements",
    text: "SELECT tenant_id, backend_id, epoch, quiesced_at FROM tenant_storage_placements ORDER BY tenant_id",
  });
  return rows.map((row) => ({ tenantId: row.tenant_id, backendId: row.backend_id, epoch: row.epoch, quiescedAt: row.quiesced_at }));
}

/**
 * Inserts the placement if the tenant has none, else replaces it only when `epoch` is strictly
 * greater than the stored one. Anything else is a Conflict that changes nothing. One statement,
 * so two operators racing cannot both win with the same epoch.
 */
export async function advanceTenantPlacement(
  db: Queryable,
  tenantId: string,
  backendId: string,
  epoch: number,
): Promise<Placement> {
  if (!BACKEND_ID_PATTERN.test(backendId)) {
    throw new AppError("invalid_argument", "backend id must be 1-128 letters, digits, '.', '-' or '_'", ["backend_id"]);
  }
  if (!Number.isSafeInteger(epoch) || epoch < 1) {
    throw new AppError("invalid_argument", "epoch must be a positive integer", ["epoch"]);
  }
  const { rows } = await db.query<{ epoch: number; quiesced_at: Date | null }>({
    name: "advance_placement",
    text: `INSERT INTO tenant_storage_placements (tenant_id, backend_id, epoch, updated_at)
           VALUES ($1, $2, $3, now())
           ON CONFLICT (tenant_id) DO UPDATE
             SET backend_id = EXCLUDED.backend_id, epoch = EXCLUDED.epoch, updated_at = now()
             -- only a strictly newer epoch replaces the placement
             WHERE tenant_storage_placements.epoch < EXCLUDED.epoch
           RETURNING epoch, quiesced_at`,
    values: [tenantId, backendId, epoch],
  });
  if (rows.length === 0) {
    const current = await readPlacement(db, tenantId);
    throw new AppError(
      "conflict",
      `placement epoch ${epoch} is not newer than the current epoch ${current?.epoch ?? "?"}`,
      ["epoch"],
    );
  }
  return { tenantId, backendId, epoch, quiescedAt: rows[0]!.quiesced_at };
}

/**
 * Quiesces the tenant for a move, if its placement is still at `epoch`: API writes and new claims
 * stop (within the placement refresh interval). Keeps the first time when called again.
 */
export async function quiescePlacement(db: Queryable, tenantId: string, epoch: number): Promise<boolean> {
  const { rowCount } = await db.query({
    name: "quiesce_placement",
    text: "UPDATE tenant_storage_placements SET quiesced_at = coalesce(quiesced_at, now()) WHERE tenant_id = $1 AND epoch = $2",
    values: [tenantId, epoch],
  });
  return rowCount === 1;
}

/** Ends the quiesce of a tenant placed on `backendId`: writes and claims resume there. */
export async function resumePlacement(db: Queryable, tenantId: string, backendId: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: "resume_placement",
    text: "UPDATE tenant_storage_placements SET quiesced_at = NULL WHERE tenant_id = $1 AND backend_id = $2",
    values: [tenantId, backendId],
  });
  return rowCount === 1;
}
