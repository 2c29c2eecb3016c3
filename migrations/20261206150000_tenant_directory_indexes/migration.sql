-- The operator console's tenants table (engine/storage/tenant-directory.ts) pages through every
-- tenant by name or by slug, a keyset page at a time, and filters by what the operator types.
-- Both orders compare bytes (COLLATE "C"): a page boundary then means the same in the index, in
-- the ORDER BY and in the cursor whatever the database's locale, and a prefix search (LIKE 'ab%')
-- is one range of the same index. The slug order has its own index because the primary key
-- compares in the database's collation, which need not be "C".
CREATE INDEX "tenants_name_order_idx" ON "tenants" ((lower("name") COLLATE "C"), ("id" COLLATE "C"));
CREATE INDEX "tenants_slug_order_idx" ON "tenants" (("id" COLLATE "C"));

-- Three characters or more match anywhere in the slug or the name, through trigrams. Shorter
-- searches give pg_trgm no trigram to look up (it would read the whole index), so they match
-- prefixes through the two indexes above instead. pg_trgm ships with PostgreSQL (contrib, and the
-- embedded server has it) and is a trusted extension: a database owner may create it.
-- fastupdate off: new entries go straight into the index. Tenants are created rarely, and with
-- the pending list on, a search reads every entry not yet merged: with 10,000 tenants inserted at
-- once the planner costed the index at 2,100 against 280 for reading the whole table, and 30
-- once the entries were in the index.
CREATE EXTENSION IF NOT EXISTS "pg_trgm";
CREATE INDEX "tenants_search_trgm_idx" ON "tenants" USING gin ((lower("id" || ' ' || "name")) gin_trgm_ops) WITH (fastupdate = off);
