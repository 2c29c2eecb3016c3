// SQL for `sequences`. Every statement is scoped by tenant_id.
import type pg from "pg";
import { AppError } from "../errors.ts";

type Queryable = Pick<pg.Pool, "query">;

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

export async function insertSequence(db: Queryable, tenantId: string, sequence: NewSequence): Promise<void> {
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
    throw error;
  }
}

export async function listSequences(db: Queryable, tenantId: string): Promise<SequenceSummary[]> {
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
