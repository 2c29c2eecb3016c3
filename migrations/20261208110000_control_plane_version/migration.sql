-- Every engine copies all tenants' placements and limits from the control plane and looks for
-- changes every 500 ms (engine/scheduler/tenant-view.ts). Reading both tables each time cost an
-- idle engine with 10,000 tenants about a quarter of a core, its own and PostgreSQL's. A change to
-- either table now moves one counter in the same transaction: readers look at the counter, and
-- read the tables again only when it moved. A change is visible in the tables no later than the
-- counter that names it, so a reader that reads the counter first never keeps a stale copy.
-- The body is an E-string with each semicolon written as \073 (see 20261203100000).
CREATE TABLE "control_plane_version" (
  "id" BOOLEAN PRIMARY KEY DEFAULT true CHECK ("id"),
  "version" BIGINT NOT NULL
);
INSERT INTO "control_plane_version" ("id", "version") VALUES (true, 1);

CREATE FUNCTION "control_plane_changed"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  UPDATE "control_plane_version" SET "version" = "version" + 1\073
  RETURN NULL\073
END
';

CREATE TRIGGER "tenant_storage_placements_changed" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "tenant_storage_placements"
  FOR EACH STATEMENT EXECUTE FUNCTION "control_plane_changed"();
CREATE TRIGGER "tenant_limits_changed" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "tenant_limits"
  FOR EACH STATEMENT EXECUTE FUNCTION "control_plane_changed"();
