-- Trigger slugs: a tenant-scoped name for a sequence, which emit_event spawns by. The sequence is
-- looked up by name in the emitting instance's namespace, at the pinned version or else the
-- latest one that is not deprecated.
CREATE TABLE "triggers" (
    "tenant_id" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "sequence_name" TEXT NOT NULL,
    "sequence_version" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "triggers_pkey" PRIMARY KEY ("tenant_id", "slug"),
    CONSTRAINT "triggers_version_check" CHECK ("sequence_version" IS NULL OR "sequence_version" > 0)
);
