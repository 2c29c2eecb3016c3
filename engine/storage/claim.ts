// claimDueInstances: the one statement that hands due instances to a scheduler. It locks, picks
// and flips the winners to `running` with a fresh lease, and returns what each needs to run, in a
// single round trip, so N engine processes can claim concurrently without ever claiming a row twice.
import { claimedRowOf, type ClaimedRow, type ClaimedRowColumns } from "./execution.ts";
import { asTenantId, type TenantId } from "./ids.ts";
import type { Queryable } from "./transaction.ts";

export interface ClaimedInstance {
  id: string;
  tenantId: TenantId;
  /** The fencing token of this lease: every later write of the claimer must carry it. */
  leaseEpoch: number;
  /** When the instance was due; claimed-at minus this is its schedule lag. */
  dueAt: Date;
}

/** A claim as the claim statement returns it: with the instance's row and sequence, to run it. */
export interface ClaimedWithRow extends ClaimedInstance {
  row: ClaimedRow;
}

export interface ClaimOptions {
  now: Date;
  limit: number;
  /** At most this many instances per tenant in one claim; 0 turns the cap off. */
  maxPerTenant: number;
  leaseOwner: string;
  leaseMs: number;
  /** Tenants that may not start more work now (at their in-flight limit in this process). */
  excludeTenants?: string[];
  /**
   * Only these tenants (the engine passes those placed on this backend and not being moved);
   * absent: every tenant, for tools and benchmarks that own the whole database.
   */
  onlyTenants?: string[];
  /** Tenants with a cap of their own (operators' tenant limits), over `maxPerTenant`. */
  capOverrides?: readonly [string, number][];
  /** How many instances each tenant holds in this process (those whose last commit is pending too); the capped claim serves the least served first. */
  inFlight?: readonly [string, number][];
  /**
   * How many more instances a tenant may start in this process (tenants not named: any number);
   * the capped claim takes no more of it, so none has to be handed back.
   */
  room?: readonly [string, number][];
  /** Sequences the claimer holds parsed, as `<tenant id> <sequence id>`: their definitions are not sent (row.definition is null). */
  knownSequences?: readonly string[];
}

// Both paths end the same way: the rows of the CTE `winners` become `running` under a new lease
// (owner $3, expiry $1 + $4 ms) with the epoch bumped, which fences out any earlier holder, and
// come back with what their runs start from (context, cursor, facts, sequence definition, whether
// signals wait), which a second statement per claim read before. A sequence the claimer names as
// known (its last parameter) comes back without its definition: a stored version never changes,
// and a definition of tens of kilobytes was read, sent and parsed again for every instance.
// They are found by primary key, as an array: joined to the CTE, the planner hashed it against a
// sequential scan of the whole table (9 of the claim's 19 ms at 20,000 rows, growing with them).
//
// The claim's transaction commits without waiting for the WAL flush (set from within it, read by
// the join): a claim is undone by losing it, so a PostgreSQL crash that loses one leaves the row
// scheduled under its old epoch, the run's fenced commits are refused as after a lost lease, and
// the instance is claimed again. The run's final commit waits for the flush, which covers its
// claim too. Waiting for the disk here held every claim behind a slow flush (a commit batch
// waited up to 873 ms on the bench machine), and with it every due instance of every tenant.
const flipToRunning = (known: string) => `,
asynchronous AS (SELECT set_config('synchronous_commit', 'off', true) AS setting)
UPDATE task_instances t
   SET state = 'running',
       lease_owner = $3,
       lease_expires_at = $1 + make_interval(secs => $4 / 1000.0),
       lease_epoch = t.lease_epoch + 1,
       defer_reason = NULL,
       updated_at = $1
  FROM asynchronous
 WHERE t.id = ANY(ARRAY(SELECT id FROM winners))
RETURNING t.id, t.tenant_id, t.lease_epoch, t.next_fire_at, t.priority,
          t.sequence_id, t.context, t.cursor, t.timezone, t.started_at, t.current_step, t.current_step_started_at, t.current_attempt, t.steps_executed,
          -- the sequence must belong to the instance's own tenant: a forged sequence_id can never
          -- pull another tenant's definition into this instance; none for the sequences the
          -- claimer has parsed already (${known}, as '<tenant> <sequence id>', its cache's keys)
          CASE WHEN t.tenant_id || ' ' || t.sequence_id::text = ANY(${known}::text[]) THEN NULL
               ELSE (SELECT s.definition FROM sequences s WHERE s.id = t.sequence_id AND s.tenant_id = t.tenant_id) END AS definition,
          EXISTS (SELECT 1 FROM signals g WHERE g.instance_id = t.id AND NOT g.delivered) AS has_signals`;

// Two texts of each path: only the placed tenants ($6, the engine's) or every tenant (tools and
// benchmarks that own the database). The placed test is array_position, not `= ANY($6)`: the
// planner can match `tenant_id = ANY` to the tenant indexes, and in the throughput bench that
// text claimed at a 2.8–2.9 ms median against 1.4–1.9 ms for array_position, which it cannot index and
// so leaves the claim index, in claim order, in charge. One text with `$6 IS NULL OR …` for
// both cases was slower again.
type TenantFilter = (column: string) => string;
const onlyPlaced: TenantFilter = (column) => `AND array_position($6::text[], ${column}) IS NOT NULL`;
/** Keeps $6 typed (always NULL here): a constant test, checked once per execution. */
const everyTenant: TenantFilter = () => "AND $6::text[] IS NULL";

// Whether anything at all is due: one probe of the claim index per priority (0-3, as in
// NEXT_DUE_SQL below), each stopping at its first row. Both paths start with it as a one-time
// filter: without it an empty claim read every scheduled row (the plain path) or visited every
// tenant with scheduled work (the capped path: 58 ms a claim with 5,600 tenants holding only
// future-dated work). The ORDER BY holds the planner to the index: without it, it chose a
// sequential scan for the priorities with no due rows (43 ms a claim at 100,000 due rows).
const ANY_DUE = `EXISTS (
  SELECT 1 FROM unnest('{3,2,1,0}'::smallint[]) AS p(priority)
   CROSS JOIN LATERAL (
     SELECT 1 FROM task_instances
      WHERE state = 'scheduled' AND priority = p.priority AND next_fire_at <= $1
      ORDER BY next_fire_at LIMIT 1) due)`;

// Cap off: the plain path. The partial claim index yields due rows in claim order; SKIP LOCKED
// lets concurrent claimers take disjoint rows instead of queueing behind each other.
const plain = (filter: TenantFilter) => `
WITH winners AS (
  SELECT id FROM task_instances
  WHERE state = 'scheduled' AND next_fire_at <= $1 AND tenant_id <> ALL($5::text[]) ${filter("tenant_id")} AND ${ANY_DUE}
  ORDER BY priority DESC, next_fire_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
${flipToRunning("$7")}`;

// Cap on. DESIGN.md proposed over-selecting limit * cap rows in claim order and ranking them per
// tenant; that starves every tenant whose work is newer than a flooding tenant's first
// limit * cap rows, which is exactly the noisy neighbour. Instead:
//   tenants:    a loose index scan visits each tenant with scheduled work once (cost ~ tenants),
//   eligible:   less the tenants this process may not start more work for (or not placed here),
//   candidates: each tenant's first `cap` due rows in claim order (cost ~ tenants * cap), where a
//               tenant's own cap (tenant_limits) overrides the default, and no more than the
//               tenant may start in this process,
//   picked:     the best `limit` candidates across tenants: by priority, then the tenant's
//               in-flight count here plus the candidate's rank within its tenant, then due time.
//               In claim order alone, a flood's oldest rows won every claim of a few free slots
//               (a slot frees at each run's end), and a quiet tenant's row newly due waited
//               until many slots were free at once,
//   winners:    those rows locked, skipping any a concurrent claimer holds. By primary key, as
//               an array: with `IN (SELECT …)` the planner chose a hash semi-join over a
//               sequential scan of the whole table at 1,000,000 rows (280 ms a claim).
const capped = (filter: TenantFilter) => `
WITH RECURSIVE tenants AS (
  (SELECT tenant_id FROM task_instances WHERE state = 'scheduled' AND ${ANY_DUE} ORDER BY tenant_id LIMIT 1)
  UNION ALL
  SELECT (SELECT s.tenant_id FROM task_instances s
           WHERE s.state = 'scheduled' AND s.tenant_id > tenants.tenant_id
           ORDER BY s.tenant_id LIMIT 1)
    FROM tenants WHERE tenants.tenant_id IS NOT NULL
),
eligible AS (
  SELECT t.tenant_id, least(coalesce(o.cap, $7), r.room) AS cap
    FROM tenants t
    LEFT JOIN unnest($8::text[], $9::int[]) AS o(tenant_id, cap) ON o.tenant_id = t.tenant_id
    LEFT JOIN unnest($12::text[], $13::int[]) AS r(tenant_id, room) ON r.tenant_id = t.tenant_id
   WHERE t.tenant_id IS NOT NULL AND t.tenant_id <> ALL($5::text[]) ${filter("t.tenant_id")}
),
candidates AS (
  SELECT c.id, c.priority, c.next_fire_at,
         coalesce(f.in_flight, 0) + row_number() OVER (PARTITION BY eligible.tenant_id ORDER BY c.priority DESC, c.next_fire_at) AS served
    FROM eligible
    CROSS JOIN LATERAL (
      SELECT id, priority, next_fire_at FROM task_instances
       WHERE state = 'scheduled' AND tenant_id = eligible.tenant_id AND next_fire_at <= $1
       ORDER BY priority DESC, next_fire_at
       LIMIT eligible.cap
    ) c
    LEFT JOIN unnest($10::text[], $11::int[]) AS f(tenant_id, in_flight) ON f.tenant_id = eligible.tenant_id
),
picked AS (
  SELECT id FROM candidates ORDER BY priority DESC, served, next_fire_at LIMIT $2
),
winners AS (
  SELECT id FROM task_instances
   WHERE id = ANY(ARRAY(SELECT id FROM picked)) AND state = 'scheduled'
   FOR UPDATE SKIP LOCKED
)
${flipToRunning("$14")}`;

export const CLAIM_SQL = { plain: plain(onlyPlaced), capped: capped(onlyPlaced), plainAll: plain(everyTenant), cappedAll: capped(everyTenant) } as const;

export async function claimDueInstances(db: Queryable, options: ClaimOptions): Promise<ClaimedWithRow[]> {
  const overrides = options.capOverrides ?? [];
  const isCapped = options.maxPerTenant > 0 || overrides.length > 0;
  const filtered = options.onlyTenants !== undefined;
  const values: unknown[] = [options.now, options.limit, options.leaseOwner, options.leaseMs, options.excludeTenants ?? []];
  values.push(filtered ? options.onlyTenants : null); // $6: the placed tenants, or NULL for every tenant
  // With the default cap off, a tenant without a cap of its own may fill the whole batch.
  if (isCapped) {
    const inFlight = options.inFlight ?? [];
    values.push(options.maxPerTenant > 0 ? options.maxPerTenant : options.limit, overrides.map(([t]) => t), overrides.map(([, cap]) => cap));
    const room = options.room ?? [];
    values.push(inFlight.map(([t]) => t), inFlight.map(([, n]) => n), room.map(([t]) => t), room.map(([, n]) => n));
  }
  values.push(options.knownSequences ?? []); // the last: $7 plain, $14 capped
  const { rows } = await db.query<ClaimedRowColumns & { lease_epoch: number; next_fire_at: Date; priority: number }>({
    name: `claim_due_${isCapped ? "capped" : "plain"}${filtered ? "" : "_all"}`,
    text: isCapped ? (filtered ? CLAIM_SQL.capped : CLAIM_SQL.cappedAll) : filtered ? CLAIM_SQL.plain : CLAIM_SQL.plainAll,
    values,
  });
  // RETURNING follows the join's order, not the claim's: put the batch back in claim order, so
  // the scheduler starts the most urgent first.
  rows.sort((a, b) => b.priority - a.priority || a.next_fire_at.getTime() - b.next_fire_at.getTime());
  return rows.map((row) => ({ id: row.id, tenantId: asTenantId(row.tenant_id), leaseEpoch: row.lease_epoch, dueAt: row.next_fire_at, row: claimedRowOf(row) }));
}

// The earliest due time after `now`, so an idle scheduler can wake when it comes instead of at
// its next tick. One probe of the claim index per priority (0–3, a CHECK holds them there): each
// is a range scan that stops at its first row, so the cost does not grow with a due backlog,
// whose rows are all at or before `now`. Tenants not placed here are not filtered out: waking
// for one of theirs costs one empty claim.
const NEXT_DUE_SQL = `
SELECT min(next.next_fire_at) AS next_fire_at
  FROM unnest('{3,2,1,0}'::smallint[]) AS p(priority)
  CROSS JOIN LATERAL (
    SELECT next_fire_at FROM task_instances
     WHERE state = 'scheduled' AND priority = p.priority AND next_fire_at > $1
     ORDER BY next_fire_at LIMIT 1
  ) next`;

export async function nextDueAfter(db: Queryable, now: Date): Promise<Date | null> {
  const { rows } = await db.query<{ next_fire_at: Date | null }>({ name: "next_due_after", text: NEXT_DUE_SQL, values: [now] });
  return rows[0]?.next_fire_at ?? null;
}
