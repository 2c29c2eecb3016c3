-- An instance's log lines (wire-format V, GET /instances/{id}/logs): written by `log` steps and
-- by workers' complete and fail `logs`, at most 1000 per instance (engine/storage/instance-logs.ts).
CREATE TABLE "instance_logs" (
    "tenant_id" TEXT NOT NULL,
    "id" BIGSERIAL NOT NULL,
    "instance_id" UUID NOT NULL,
    "block_id" TEXT NOT NULL,
    "level" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "ts" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "instance_logs_pkey" PRIMARY KEY ("tenant_id", "id")
);
CREATE INDEX "instance_logs_instance_idx" ON "instance_logs" ("tenant_id", "instance_id", "id");
