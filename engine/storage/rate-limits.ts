// Rate limits per (tenant, key), shared by every engine process through PostgreSQL.
//
// A policy allows `max_count` units in any window of `window_ms`. It owns exactly `max_count`
// rows in `rate_limit_windows`, one per unit (a slot). A slot is busy for `window_ms` from
// `window_start`, the time it was last consumed. Taking a unit means taking a slot that is not
// busy and stamping it with the current time.
//
// Why this is exact: two uses of one slot are at least `window_ms` apart, so a window of that
// length holds at most one use per slot, and at most `max_count` uses in all, wherever the
// window starts. A fixed-window counter lets up to twice the limit through at a boundary.
// Why it holds under concurrency: a consumer takes its slot with FOR UPDATE SKIP LOCKED, so two
// consumers never take one slot. A slot that another consumer stamped after this statement's
// snapshot is re-checked on its newest version when locked, found busy, and skipped.
import { AppError } from "../errors.ts";
import type { Queryable } from "./transaction.ts";
import type { TenantId } from "./ids.ts";

/** The answer of a reservation: the unit is taken, or none is free before `retryAt`. */
export type Reservation = { ok: true } | { ok: false; retryAt: Date };

export interface RateLimitPolicy {
  key: string;
  maxCount: number;
  windowMs: number;
  /** Units taken in the window that ends now. */
  inWindow: number;
}

/** One row per unit, so the policy size is bounded: 100 000 slots is a few MB. */
export const MAX_RATE_LIMIT_COUNT = 100_000;
/** 366 days. */
export const MAX_RATE_LIMIT_WINDOW_MS = 366 * 86_400_000;

// policy: no row means the key is unlimited, and the statement writes nothing.
// free:   the longest-idle slot that is not busy, locked. SKIP LOCKED lets concurrent consumers
//         take different slots instead of queueing on one; a slot stamped by a concurrent
//         consumer fails the re-check on its new version and is skipped.
// taken:  that slot, stamped with now.
// The final SELECT reads the snapshot: when nothing was taken, the next slot frees at the
// earliest busy stamp plus the window. A slot that looked free but was taken concurrently was
// stamped about now, so it frees at now plus the window: that is the fallback.
const CONSUME = `
WITH policy AS (
  SELECT window_ms * interval '1 millisecond' AS span
    FROM rate_limit_policies
   WHERE tenant_id = $1 AND key = $2
),
free AS (
  SELECT w.slot
    FROM rate_limit_windows w, policy
   WHERE w.tenant_id = $1 AND w.key = $2 AND w.window_start <= $3::timestamptz - policy.span
   ORDER BY w.window_start
   LIMIT 1
   FOR UPDATE OF w SKIP LOCKED
),
taken AS (
  UPDATE rate_limit_windows w
     SET window_start = $3
    FROM free
   WHERE w.tenant_id = $1 AND w.key = $2 AND w.slot = free.slot
  RETURNING w.slot
)
SELECT EXISTS (SELECT 1 FROM policy) AS limited,
       EXISTS (SELECT 1 FROM taken) AS taken,
       coalesce((SELECT min(w.window_start)
                   FROM rate_limit_windows w, policy
                  WHERE w.tenant_id = $1 AND w.key = $2 AND w.window_start > $3::timestamptz - policy.span),
                $3::timestamptz) + (SELECT span FROM policy) AS retry_at`;

/** Takes one unit of the (tenant, key) policy at `now`; a key without a policy is unlimited. */
export async function tryConsumeRateLimit(db: Queryable, tenantId: TenantId, key: string, now: Date): Promise<Reservation> {
  const { rows } = await db.query<{ limited: boolean; taken: boolean; retry_at: Date | null }>({
    name: "rate_limit_consume",
    text: CONSUME,
    values: [tenantId, key, now],
  });
  const row = rows[0]!;
  if (!row.limited || row.taken) return { ok: true };
  return { ok: false, retryAt: row.retry_at! };
}

// policy:  the policy, created or replaced.
// slots:   the key's slots, most recently used first.
// surplus: when the policy shrinks, the slots past the new size go, the least recently used
//          first: the kept ones are the latest uses, so the next unit frees only once every
//          dropped use has left the window too, and the new limit holds from the change on.
// Last:    when it grows, new idle slots numbered after the highest. Shrinking and growing
//          exclude each other, so both may read the same snapshot.
const SET_POLICY = `
WITH policy AS (
  INSERT INTO rate_limit_policies (tenant_id, key, max_count, window_ms)
  VALUES ($1, $2, $3, $4)
  ON CONFLICT (tenant_id, key) DO UPDATE SET max_count = EXCLUDED.max_count, window_ms = EXCLUDED.window_ms
),
slots AS (
  SELECT slot, row_number() OVER (ORDER BY window_start DESC, slot) AS rank
    FROM rate_limit_windows
   WHERE tenant_id = $1 AND key = $2
),
surplus AS (
  DELETE FROM rate_limit_windows w
   USING slots
   WHERE w.tenant_id = $1 AND w.key = $2 AND w.slot = slots.slot AND slots.rank > $3
)
INSERT INTO rate_limit_windows (tenant_id, key, slot, window_start)
SELECT $1, $2, coalesce((SELECT max(slot) FROM slots), -1) + n, '-infinity'
  FROM generate_series(1, $3 - (SELECT count(*) FROM slots)) AS n
ON CONFLICT DO NOTHING`;

/** Creates or replaces the policy of (tenant, key): at most `maxCount` units per `windowMs`. */
export async function setRateLimitPolicy(
  db: Queryable,
  tenantId: TenantId,
  key: string,
  maxCount: number,
  windowMs: number,
): Promise<void> {
  if (key === "" || key.length > 256) throw new AppError("invalid_argument", "rate limit key must be 1-256 characters", ["key"]);
  if (!Number.isInteger(maxCount) || maxCount < 1 || maxCount > MAX_RATE_LIMIT_COUNT) {
    throw new AppError("invalid_argument", `max_count must be an integer from 1 to ${MAX_RATE_LIMIT_COUNT}`, ["max_count"]);
  }
  if (!Number.isInteger(windowMs) || windowMs < 1 || windowMs > MAX_RATE_LIMIT_WINDOW_MS) {
    throw new AppError("invalid_argument", `window_ms must be an integer from 1 to ${MAX_RATE_LIMIT_WINDOW_MS}`, ["window_ms"]);
  }
  await db.query({ name: "rate_limit_set_policy", text: SET_POLICY, values: [tenantId, key, maxCount, windowMs] });
}

/** Removes the policy of (tenant, key) and its slots; false when there was none. */
export async function removeRateLimitPolicy(db: Queryable, tenantId: TenantId, key: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: "rate_limit_remove_policy",
    text: `WITH slots AS (DELETE FROM rate_limit_windows WHERE tenant_id = $1 AND key = $2)
           DELETE FROM rate_limit_policies WHERE tenant_id = $1 AND key = $2`,
    values: [tenantId, key],
  });
  return rowCount === 1;
}

/** The tenant's policies by key, each with the units taken in the window that ends at `now`. */
export async function listRateLimitPolicies(db: Queryable, tenantId: TenantId, now: Date): Promise<RateLimitPolicy[]> {
  const { rows } = await db.query<{ key: string; max_count: number; window_ms: number; in_window: number }>({
    name: "rate_limit_list_policies",
    text: `SELECT p.key, p.max_count, p.window_ms,
                  (SELECT count(*)::int FROM rate_limit_windows w
                    WHERE w.tenant_id = p.tenant_id AND w.key = p.key
                      AND w.window_start > $2::timestamptz - p.window_ms * interval '1 millisecond') AS in_window
             FROM rate_limit_policies p
            WHERE p.tenant_id = $1
            ORDER BY p.key`,
    values: [tenantId, now],
  });
  return rows.map((row) => ({ key: row.key, maxCount: row.max_count, windowMs: row.window_ms, inWindow: row.in_window }));
}
