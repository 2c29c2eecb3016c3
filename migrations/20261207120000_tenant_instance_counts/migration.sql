-- Per tenant and state, how many instances it has: the tenant overview's counts, read from a few
-- rows instead of counting the tenant's instances (engine/storage/instance-counts.ts). Kept by
-- statement triggers on task_instances as rows of deltas: each statement appends one row per
-- tenant and state it changed, so writers never wait on a shared counter row, and the engine
-- merges a tenant's deltas into one row per state every few seconds (merged = true).
-- A tenant table that a move does not copy: the copy's inserts of task_instances write it again.
-- The bodies are E-strings with each semicolon written as \073 (see 20261203100000).
CREATE TABLE "tenant_instance_counts" (
  "id" BIGSERIAL NOT NULL,
  "tenant_id" TEXT NOT NULL,
  "state" TEXT NOT NULL,
  "n" BIGINT NOT NULL,
  "merged" BOOLEAN NOT NULL DEFAULT false,
  CONSTRAINT "tenant_instance_counts_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "tenant_instance_counts_tenant_idx" ON "tenant_instance_counts" ("tenant_id", "state");
-- What the merge looks for: the deltas not merged yet.
CREATE INDEX "tenant_instance_counts_unmerged_idx" ON "tenant_instance_counts" ("tenant_id", "state") WHERE NOT "merged";

CREATE FUNCTION "tenant_instance_counts_on_insert"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "tenant_instance_counts" ("tenant_id", "state", "n")
  SELECT "tenant_id", "state", count(*) FROM new_rows GROUP BY 1, 2\073
  RETURN NULL\073
END
';

CREATE FUNCTION "tenant_instance_counts_on_delete"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "tenant_instance_counts" ("tenant_id", "state", "n")
  SELECT "tenant_id", "state", -count(*) FROM old_rows GROUP BY 1, 2\073
  RETURN NULL\073
END
';

-- Only rows whose state changed count: most updates (leases, cursors, heartbeats) change none,
-- and then nothing is written.
CREATE FUNCTION "tenant_instance_counts_on_update"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  INSERT INTO "tenant_instance_counts" ("tenant_id", "state", "n")
  SELECT "tenant_id", "state", sum("d") FROM (
    SELECT o."tenant_id", o."state", -1 AS "d" FROM old_rows o JOIN new_rows n ON n."id" = o."id"
     WHERE n."state" IS DISTINCT FROM o."state" OR n."tenant_id" IS DISTINCT FROM o."tenant_id"
    UNION ALL
    SELECT n."tenant_id", n."state", 1 FROM old_rows o JOIN new_rows n ON n."id" = o."id"
     WHERE n."state" IS DISTINCT FROM o."state" OR n."tenant_id" IS DISTINCT FROM o."tenant_id"
  ) AS "changes"
  GROUP BY 1, 2 HAVING sum("d") <> 0\073
  RETURN NULL\073
END
';

CREATE TRIGGER "task_instances_counts_on_insert" AFTER INSERT ON "task_instances"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "tenant_instance_counts_on_insert"();
CREATE TRIGGER "task_instances_counts_on_delete" AFTER DELETE ON "task_instances"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "tenant_instance_counts_on_delete"();
CREATE TRIGGER "task_instances_counts_on_update" AFTER UPDATE ON "task_instances"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "tenant_instance_counts_on_update"();

-- The instances already stored, counted once (migrations run before the engines start).
INSERT INTO "tenant_instance_counts" ("tenant_id", "state", "n", "merged")
SELECT "tenant_id", "state", count(*), true FROM "task_instances" GROUP BY 1, 2;
