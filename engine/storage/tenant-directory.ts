// SQL of the operator console's tenants table (control plane, on the primary): a keyset page of
// tenants by name or by slug, filtered by what the operator types, with each tenant's placement
// and its own limits. The indexes are in migrations/20261206150000_tenant_directory_indexes.
//
// Both orders compare bytes (COLLATE "C"), as the indexes do, so the cursor a page ends on is the
// same position in the ORDER BY and in the index whatever the database's locale. A search of one
// or two characters matches a prefix of the slug or of the (lower-cased) name: one range of each
// order index. Three characters or more match anywhere in either, through the trigram index
// (pg_trgm has no trigram to look up in a shorter one).
//
// These statements are sent unnamed, never prepared: PostgreSQL plans an unnamed statement with
// its parameter values, and only a known pattern becomes an index range (a generic plan of a
// named statement would read every tenant for `LIKE $1`).
import type { Queryable } from "./transaction.ts";
import type { TenantLimits } from "./tenant-limits.ts";

export type DirectoryOrder = "name" | "slug";

/** Characters from which a search matches anywhere instead of at the start. */
export const SUBSTRING_SEARCH_MIN = 3;

export interface DirectoryRow {
  id: string;
  name: string;
  /** lower(name) as PostgreSQL computes it: the name order's key, for the cursor. */
  nameKey: string;
  createdAt: Date;
  backendId: string | null;
  epoch: number | null;
  quiesced: boolean;
  /** The tenant's own limits; null where it keeps the default. */
  limits: TenantLimits;
}

export interface DirectoryQuery {
  /** Trimmed; empty: every tenant. */
  search: string;
  order: DirectoryOrder;
  /** The last row of the previous page: its name key (name order) and id. */
  after: { nameKey?: string; id: string } | null;
  limit: number;
  /** Tenants left out (the console's activity orders list those first). */
  exclude?: readonly string[];
}

const COLUMNS = `t.id, t.name, lower(t.name) AS name_key, t.created_at, p.backend_id, p.epoch, p.quiesced_at IS NOT NULL AS quiesced,
       l.claim_cap, l.max_concurrency, l.max_steps, l.outbound_per_host, l.api_rate_per_sec, l.cron_schedules, l.webhook_rate_per_sec,
       l.lag_objective_ms, l.retention_days`;
const FROM = `FROM tenants t
  LEFT JOIN tenant_storage_placements p ON p.tenant_id = t.id
  LEFT JOIN tenant_limits l ON l.tenant_id = t.id`;
const NAME_KEY = `lower(t.name) COLLATE "C"`;
const SLUG_KEY = `t.id COLLATE "C"`;

/** LIKE's own characters taken literally (backslash is LIKE's default escape). */
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The search's condition on `t`, its pattern appended to `values`. Patterns are lower-cased by
 * PostgreSQL, as the indexed names are, so both sides fold case the same way.
 */
function searchCondition(search: string, values: unknown[]): string | null {
  if (search === "") return null;
  if ([...search].length >= SUBSTRING_SEARCH_MIN) {
    values.push(`%${escapeLike(search)}%`);
    return `lower(t.id || ' ' || t.name) LIKE lower($${values.length})`;
  }
  values.push(`${escapeLike(search)}%`);
  const n = values.length;
  return `(${NAME_KEY} LIKE lower($${n}) OR ${SLUG_KEY} LIKE lower($${n}))`;
}

/** The statement of one page, for listDirectoryPage and for tests that read its plan. */
export function directoryPageQuery(query: DirectoryQuery): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const where: string[] = [];
  const search = searchCondition(query.search, values);
  if (search) where.push(search);
  if (query.after) {
    if (query.order === "name") {
      values.push(query.after.nameKey ?? "", query.after.id);
      where.push(`(${NAME_KEY}, ${SLUG_KEY}) > ($${values.length - 1}, $${values.length})`);
    } else {
      values.push(query.after.id);
      where.push(`${SLUG_KEY} > $${values.length}`);
    }
  }
  if (query.exclude && query.exclude.length > 0) {
    values.push(query.exclude);
    where.push(`t.id <> ALL($${values.length}::text[])`);
  }
  values.push(query.limit);
  const order = query.order === "name" ? `${NAME_KEY}, ${SLUG_KEY}` : SLUG_KEY;
  return {
    text: `SELECT ${COLUMNS} ${FROM}${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY ${order} LIMIT $${values.length}`,
    values,
  };
}

interface Row {
  id: string; name: string; name_key: string; created_at: Date; backend_id: string | null; epoch: string | number | null; quiesced: boolean | null;
  claim_cap: number | null; max_concurrency: number | null; max_steps: number | null; outbound_per_host: number | null;
  api_rate_per_sec: number | null; cron_schedules: number | null; webhook_rate_per_sec: number | null;
  lag_objective_ms: number | null; retention_days: number | null;
}

const fromRow = (r: Row): DirectoryRow => ({
  id: r.id, name: r.name, nameKey: r.name_key, createdAt: r.created_at, backendId: r.backend_id,
  epoch: r.epoch === null ? null : Number(r.epoch), quiesced: r.quiesced === true,
  limits: {
    claimCap: r.claim_cap, maxConcurrency: r.max_concurrency, maxSteps: r.max_steps, outboundPerHost: r.outbound_per_host,
    apiRatePerSec: r.api_rate_per_sec, cronSchedules: r.cron_schedules, webhookRatePerSec: r.webhook_rate_per_sec,
    lagObjectiveMs: r.lag_objective_ms, retentionDays: r.retention_days,
  },
});

export async function listDirectoryPage(db: Queryable, query: DirectoryQuery): Promise<DirectoryRow[]> {
  const { rows } = await db.query<Row>(directoryPageQuery(query));
  return rows.map(fromRow);
}

/** How many tenants the search matches (every tenant for none). */
export async function countDirectory(db: Queryable, search: string): Promise<number> {
  const values: unknown[] = [];
  const condition = searchCondition(search, values);
  const { rows } = await db.query<{ n: number }>({
    text: `SELECT count(*)::int AS n FROM tenants t${condition ? ` WHERE ${condition}` : ""}`,
    values,
  });
  return rows[0]!.n;
}

/** These tenants (those that exist and match the search), in no particular order. */
export async function directoryRowsOf(db: Queryable, ids: readonly string[], search = ""): Promise<DirectoryRow[]> {
  if (ids.length === 0) return [];
  const values: unknown[] = [ids];
  const condition = searchCondition(search, values);
  const { rows } = await db.query<Row>({
    text: `SELECT ${COLUMNS} ${FROM} WHERE t.id = ANY($1::text[])${condition ? ` AND ${condition}` : ""}`,
    values,
  });
  return rows.map(fromRow);
}

/** Of these tenants, those that match the search, with the backend each is placed on (null: unplaced). */
export async function matchingPlacementsOf(db: Queryable, ids: readonly string[], search: string): Promise<Map<string, string | null>> {
  if (ids.length === 0) return new Map();
  const values: unknown[] = [ids];
  const condition = searchCondition(search, values);
  const { rows } = await db.query<{ id: string; backend_id: string | null }>({
    text: `SELECT t.id, p.backend_id FROM tenants t LEFT JOIN tenant_storage_placements p ON p.tenant_id = t.id
            WHERE t.id = ANY($1::text[])${condition ? ` AND ${condition}` : ""}`,
    values,
  });
  return new Map(rows.map((r) => [r.id, r.backend_id]));
}
