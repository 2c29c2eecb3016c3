-- Checkpoints (wire-format P): snapshots a client attaches to an instance. The engine does not
-- read them. Newest first is (created_at, id) descending: ids are UUIDv7.
CREATE TABLE "instance_checkpoints" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "instance_id" UUID NOT NULL,
    "checkpoint_data" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "instance_checkpoints_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "instance_checkpoints_newest_idx" ON "instance_checkpoints" ("tenant_id", "instance_id", "created_at" DESC, "id" DESC);
