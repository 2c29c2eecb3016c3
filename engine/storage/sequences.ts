// SQL for `sequences`. Every statement is scoped by tenant_id.
import { AppError } from "../errors.ts";
import { rejectUnstorableText } from "./instance-records.ts";
import type { Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";

export interface NewSequence {
  id: string;
  namespace: string;
  name: string;
  version: number;
  /** The whole sequence JSON as submitted (wire-format A.1). */
  definition: unknown;
  status?: "draft" | "staging" | "production" | "unpublished";
  deprecated?: boolean;
  createdAt: Date;
}

export interface SequenceSummary {
  id: string;
  namespace: string;
  name: string;
  version: number;
  status: string;
  deprecated: boolean;
  createdAt: Date;
}

export async function insertSequence(db: Queryable, tenantId: TenantId, sequence: NewSequence): Promise<void> {
  try {
    await db.query({
      name: "insert_sequence",
      text: `INSERT INTO sequences (id, tenant_id, namespace, name, version, definition, status, deprecated, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      values: [
        sequence.id, tenantId, sequence.namespace, sequence.name, sequence.version,
        JSON.stringify(sequence.definition), sequence.status ?? "production", sequence.deprecated ?? false,
        sequence.createdAt,
      ],
    });
  } catch (error) {
    if ((error as { code?: string }).code === "23505") {
      throw new AppError("already_exists", "sequence already exists");
    }
    throw rejectUnstorableText(error);
  }
}

export async function listSequences(db: Queryable, tenantId: TenantId): Promise<SequenceSummary[]> {
  const { rows } = await db.query<{
    id: string; namespace: string; name: string; version: number; status: string; deprecated: boolean; created_at: Date;
  }>({
    name: "list_sequences",
    text: `SELECT id, namespace, name, version, status, deprecated, created_at
           FROM sequences WHERE tenant_id = $1
           ORDER BY namespace, name, version DESC`,
    values: [tenantId],
  });
  return rows.map((row) => ({
    id: row.id, namespace: row.namespace, name: row.name, version: row.version,
    status: row.status, deprecated: row.deprecated, createdAt: row.created_at,
  }));
}

export interface SequenceRecord extends SequenceSummary {
  /** The stored definition: the canonical form parseSequence produced (wire-format A.1). */
  definition: unknown;
}

export async function getSequence(db: Queryable, tenantId: TenantId, id: string): Promise<SequenceRecord | null> {
  const { rows } = await db.query<{
    id: string; namespace: string; name: string; version: number; status: string; deprecated: boolean; created_at: Date; definition: unknown;
  }>({
    name: "get_sequence",
    text: `SELECT id, namespace, name, version, status, deprecated, created_at, definition
           FROM sequences WHERE tenant_id = $1 AND id = $2`,
    values: [tenantId, id],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id, namespace: row.namespace, name: row.name, version: row.version,
    status: row.status, deprecated: row.deprecated, createdAt: row.created_at, definition: row.definition,
  };
}

/** Which of `ids` are sequences of the tenant (instance creation checks them all at once). */
/**
 * The tenant's sequences among `ids`, each with its `input_schema` (null when it has none); ids
 * of other tenants' sequences are simply absent.
 */
export async function sequenceInputSchemas(db: Queryable, tenantId: TenantId, ids: readonly string[]): Promise<Map<string, unknown>> {
  const { rows } = await db.query<{ id: string; input_schema: unknown }>({
    name: "sequence_input_schemas",
    text: "SELECT id, definition->'input_schema' AS input_schema FROM sequences WHERE tenant_id = $1 AND id = ANY($2::uuid[])",
    values: [tenantId, ids],
  });
  return new Map(rows.map((row) => [row.id, row.input_schema]));
}

/** The tenant of the sequence with this id on this backend, for Storage.locate only. */
export async function sequenceOwner(db: Queryable, id: string): Promise<string | null> {
  const { rows } = await db.query<{ tenant_id: string }>({
    name: "sequence_owner",
    text: "SELECT tenant_id FROM sequences WHERE id = $1 LIMIT 2",
    values: [id],
  });
  // Ids are unique per tenant only: with the same id in several tenants, none of them is "the" owner.
  if (rows.length > 1) {
    throw new AppError("invalid_argument", "several tenants have a sequence with this id: name the tenant (X-Tenant-Id header or tenant_id)");
  }
  return rows[0]?.tenant_id ?? null;
}

/** Every handler name the tenant's sequences use (steps, fallbacks, compensations), in one query. */
export async function listHandlerNames(db: Queryable, tenantId: TenantId): Promise<string[]> {
  const { rows } = await db.query<{ handler: string }>({
    name: "list_handler_names",
    text: `SELECT DISTINCT v #>> '{}' AS handler
             FROM sequences s,
                  LATERAL (SELECT jsonb_path_query(s.definition, '$.**.handler') AS v
                           UNION ALL SELECT jsonb_path_query(s.definition, '$.**.fallback_handler')) found
            WHERE s.tenant_id = $1 AND jsonb_typeof(v) = 'string' AND v #>> '{}' <> ''
            ORDER BY 1 LIMIT 1000`,
    values: [tenantId],
  });
  return rows.map((r) => r.handler);
}
