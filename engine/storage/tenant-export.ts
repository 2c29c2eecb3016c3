// A tenant's data as it hands it over on request (issue 23, export): a fixed list of files, each
// the tenant's rows of one table as JSON text, read from one snapshot and ordered by primary key,
// so two exports of unchanged data are the same bytes. Columns that must never leave (sealed
// credential values and refresh tokens, trigger secrets) are left out in SQL, so they are never
// even read; a flag says whether one is set. Table and column names come from the list below only.
import type { TenantId } from "./ids.ts";
import type { Connectable } from "./transaction.ts";

interface ExportedTable {
  /** The file's name in the export directory. */
  file: string;
  table: string;
  /** The primary key's columns after tenant_id: the order rows are written in. */
  orderBy: string;
  /** Columns that never leave the backend; a `flag` column, when named, says whether one is set. */
  secrets?: readonly { column: string; flag?: string }[];
}

export const EXPORTED_TABLES: readonly ExportedTable[] = [
  { file: "sequences.ndjson", table: "sequences", orderBy: "id" },
  { file: "instances.ndjson", table: "task_instances", orderBy: "id" },
  { file: "outputs.ndjson", table: "block_outputs", orderBy: "id" },
  { file: "signals.ndjson", table: "signals", orderBy: "id" },
  { file: "schedules.ndjson", table: "cron_schedules", orderBy: "id" },
  { file: "triggers.ndjson", table: "triggers", orderBy: `slug COLLATE "C"`, secrets: [{ column: "secret", flag: "has_secret" }] },
  {
    file: "credentials.ndjson", table: "credentials", orderBy: `id COLLATE "C"`,
    secrets: [{ column: "value" }, { column: "refresh_token", flag: "has_refresh_token" }],
  },
];

export const EXPORT_FILES: readonly string[] = EXPORTED_TABLES.map((t) => t.file);

/** Rows fetched per round trip: bounds the memory one export holds at once. */
const ROWS_PER_FETCH = 500;

export interface ExportVisitor {
  /** Called once, before any rows, with the snapshot's time (the reading transaction's start). */
  snapshot?(at: Date): Promise<void> | void;
  /** A page of `file`'s rows, each one line of JSON (no newline), in primary-key order. */
  rows(file: string, lines: readonly string[]): Promise<void>;
}

/** The SELECT of one exported table: the row as JSON without its secrets, plus their flags. */
function rowSelect(table: ExportedTable): string {
  const secrets = table.secrets ?? [];
  const without = secrets.map((s) => ` - '${s.column}'`).join("");
  const flagged = secrets.filter((s) => s.flag !== undefined);
  const flags = flagged.length === 0 ? "" : ` || jsonb_build_object(${flagged.map((s) => `'${s.flag}', t.${s.column} IS NOT NULL`).join(", ")})`;
  return `SELECT ((to_jsonb(t)${without})${flags})::text AS line FROM ${table.table} t WHERE t.tenant_id = $1 ORDER BY t.${table.orderBy}`;
}

/**
 * Reads the tenant's exported tables from one snapshot (a repeatable-read, read-only
 * transaction), a cursor per table fetched in pages, handing each page to `visit`; returns the
 * snapshot's time. The connection is held throughout, within the tenant's connection share.
 */
export async function exportTenantRows(db: Connectable, tenantId: TenantId, visit: ExportVisitor): Promise<Date> {
  const client = await db.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    // Timestamps as UTC whatever the connection's zone, so the bytes do not depend on it; a long
    // export's fetches are each short, so the statement timeout stays as it is.
    await client.query("SET LOCAL TimeZone = 'UTC'");
    const { rows } = await client.query<{ at: Date }>("SELECT now() AS at");
    const snapshotAt = rows[0]!.at;
    await visit.snapshot?.(snapshotAt);
    for (const table of EXPORTED_TABLES) {
      const cursor = `export_${table.table}`;
      await client.query({ text: `DECLARE ${cursor} NO SCROLL CURSOR FOR ${rowSelect(table)}`, values: [tenantId] });
      for (;;) {
        const page = await client.query<{ line: string }>(`FETCH ${ROWS_PER_FETCH} FROM ${cursor}`);
        if (page.rows.length === 0) break;
        await visit.rows(table.file, page.rows.map((r) => r.line));
      }
      await client.query(`CLOSE ${cursor}`);
    }
    await client.query("COMMIT");
    return snapshotAt;
  } catch (error) {
    await client.query("ROLLBACK").catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
