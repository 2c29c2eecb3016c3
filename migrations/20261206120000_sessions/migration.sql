-- Sessions (wire-format O): a tenant's named bag of shared JSON with a coarse state. Instances
-- attach with task_instances.session_id (given at create, inherited by sub-sequence children).
CREATE TABLE "sessions" (
    "tenant_id" TEXT NOT NULL,
    "id" UUID NOT NULL,
    "session_key" TEXT NOT NULL,
    "data" JSONB,
    "state" TEXT NOT NULL DEFAULT 'active',
    "expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sessions_pkey" PRIMARY KEY ("tenant_id", "id"),
    CONSTRAINT "sessions_state_check" CHECK ("state" IN ('active', 'paused', 'completed', 'expired'))
);
CREATE UNIQUE INDEX "sessions_tenant_key_key" ON "sessions" ("tenant_id", "session_key");

-- A session's instances, for its listing and for the state cascade.
CREATE INDEX "task_instances_session_idx" ON "task_instances" ("tenant_id", "session_id", "id") WHERE "session_id" IS NOT NULL;
