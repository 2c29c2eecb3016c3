-- The instance list's search (engine/storage/instance-search.ts), one index per kind of search
-- that the primary key does not serve, both leading with the tenant so a search reads only its
-- own tenant's entries.
--
-- Both are partial: rows in state running are not in them. An update that changes an indexed
-- column (state, next_fire_at and the lease columns are) adds an entry to every index of the
-- table, and the engine updates a row when it claims it and at each group commit while it runs.
-- These indexes get an entry only when a row leaves running (it parks, is rescheduled or ends).
-- Measured with 256-row engine-like commits over 200,000 rows with about 20 values in
-- context.data, against no search index: commits that stay running, no extra WAL and no
-- measurable slowdown, and 1.9 kB more WAL for each row that leaves running (a claim and
-- commit mix ran about 20 percent slower). The same indexes over every row cost 2.7 kB more WAL
-- on every commit, and 25 to 40 percent of the commit rate. A tenant's running rows are few
-- (the in-flight limits bound them), and a search reads those through the state index.
--
-- IF NOT EXISTS: this migration was first named 20261201150000_instance_search_indexes, and a
-- database that applied it under that name gets it again under this one.

-- Short ids are an id's last 12 hex digits, its random part (engine/short-id.ts). A prefix is
-- one range of this index. In "C" so the range is plain byte order.
CREATE INDEX IF NOT EXISTS "task_instances_search_short_id_idx"
  ON "task_instances" ("tenant_id", (right("id"::text, 12) COLLATE "C"))
  WHERE "state" <> 'running';

-- Context fields: context.data under a key that is the tenant id. jsonb_path_ops hashes each
-- value with its whole path, the tenant included, so a value many of another tenant's rows hold
-- is not in this tenant's lookup. fastupdate collects new entries in a pending list that is
-- merged in bulk, cheaper per commit than inserting each value's entry where it belongs.
CREATE INDEX IF NOT EXISTS "task_instances_search_data_idx"
  ON "task_instances" USING gin ((jsonb_set('{}'::jsonb, ARRAY["tenant_id"], "context" -> 'data')) jsonb_path_ops)
  WITH (fastupdate = on)
  WHERE "state" <> 'running';

-- Statistics on the same expression, so the planner knows how many of a tenant's rows hold a
-- value (a partial index's expression gets none): for a rare value it reads this index, for a
-- value most rows hold it walks the tenant's newest rows and stops when the page is full.
CREATE STATISTICS IF NOT EXISTS "task_instances_search_data_stats"
  ON (jsonb_set('{}'::jsonb, ARRAY["tenant_id"], "context" -> 'data')) FROM "task_instances";
