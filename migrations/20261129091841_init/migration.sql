-- CreateEnum
CREATE TYPE "membership_role" AS ENUM ('member', 'admin');

-- CreateTable
CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL DEFAULT '',
    "password_hash" TEXT NOT NULL,
    "is_operator" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tenants" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "memberships" (
    "tenant_id" TEXT NOT NULL,
    "user_id" UUID NOT NULL,
    "role" "membership_role" NOT NULL DEFAULT 'member',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "memberships_pkey" PRIMARY KEY ("tenant_id","user_id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT,
    "name" TEXT NOT NULL DEFAULT '',
    "prefix" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tenant_storage_placements" (
    "tenant_id" TEXT NOT NULL,
    "backend_id" TEXT NOT NULL,
    "epoch" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenant_storage_placements_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateTable
CREATE TABLE "sign_in_throttles" (
    "key" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "window_starts_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sign_in_throttles_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_user_id" UUID,
    "actor" TEXT NOT NULL,
    "tenant_id" TEXT,
    "action" TEXT NOT NULL,
    "details" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sequences" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "definition" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'production',
    "deprecated" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sequences_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "task_instances" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "sequence_id" UUID NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'scheduled',
    "priority" SMALLINT NOT NULL DEFAULT 1,
    "context" JSONB NOT NULL DEFAULT '{}',
    "next_fire_at" TIMESTAMPTZ(3),
    "timezone" TEXT NOT NULL DEFAULT 'UTC',
    "metadata" JSONB,
    "parent_instance_id" UUID,
    "idempotency_key" TEXT,
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "lease_epoch" BIGINT NOT NULL DEFAULT 0,
    "cursor" JSONB,
    "defer_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_instances_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "block_outputs" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "instance_id" UUID NOT NULL,
    "block_id" TEXT NOT NULL,
    "output" JSONB NOT NULL,
    "output_ref" TEXT,
    "output_size" INTEGER NOT NULL DEFAULT 0,
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "block_outputs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "signals" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "instance_id" UUID NOT NULL,
    "signal_type" TEXT NOT NULL,
    "payload" JSONB,
    "delivered" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "signals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "worker_tasks" (
    "id" UUID NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "instance_id" UUID NOT NULL,
    "block_id" TEXT NOT NULL,
    "handler_name" TEXT NOT NULL,
    "queue_name" TEXT,
    "params" JSONB,
    "context" JSONB,
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "timeout_ms" BIGINT,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "worker_id" TEXT,
    "claimed_at" TIMESTAMPTZ(3),
    "heartbeat_at" TIMESTAMPTZ(3),
    "claim_epoch" BIGINT NOT NULL DEFAULT 0,
    "resume_checkpoint" JSONB,
    "checkpoint_seq" BIGINT NOT NULL DEFAULT 0,
    "completed_at" TIMESTAMPTZ(3),
    "output" JSONB,
    "error_message" TEXT,
    "error_retryable" BOOLEAN,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "worker_tasks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "worker_task_attempts" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "task_id" UUID NOT NULL,
    "event" TEXT NOT NULL,
    "worker_id" TEXT,
    "claim_epoch" BIGINT,
    "details" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "worker_task_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event_dedupe" (
    "tenant_id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "dedupe_key" TEXT NOT NULL,
    "child_instance_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_dedupe_pkey" PRIMARY KEY ("tenant_id","scope","dedupe_key")
);

-- CreateTable
CREATE TABLE "circuit_breakers" (
    "tenant_id" TEXT NOT NULL,
    "handler" TEXT NOT NULL,
    "failure_count" INTEGER NOT NULL,
    "opened_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "circuit_breakers_pkey" PRIMARY KEY ("tenant_id","handler")
);

-- CreateTable
CREATE TABLE "rate_limit_windows" (
    "tenant_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "rate_limit_windows_pkey" PRIMARY KEY ("tenant_id","key","window_start")
);

-- CreateTable
CREATE TABLE "tenant_budgets" (
    "tenant_id" TEXT NOT NULL,
    "steps_per_period" INTEGER NOT NULL,
    "period_secs" INTEGER NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "used" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "tenant_budgets_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateTable
CREATE TABLE "tenant_metrics" (
    "tenant_id" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "claimed" INTEGER NOT NULL DEFAULT 0,
    "completed" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "deferred" JSONB NOT NULL DEFAULT '{}',
    "lag_buckets" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "backlog_samples" INTEGER[] DEFAULT ARRAY[]::INTEGER[],

    CONSTRAINT "tenant_metrics_pkey" PRIMARY KEY ("tenant_id","minute")
);

-- CreateIndex
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

-- CreateIndex
CREATE INDEX "memberships_user_id_idx" ON "memberships"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_secret_hash_key" ON "api_keys"("secret_hash");

-- CreateIndex
CREATE INDEX "api_keys_tenant_id_idx" ON "api_keys"("tenant_id");

-- CreateIndex
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at" DESC);

-- CreateIndex
CREATE INDEX "audit_log_tenant_id_at_idx" ON "audit_log"("tenant_id", "at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "sequences_tenant_id_namespace_name_version_key" ON "sequences"("tenant_id", "namespace", "name", "version");

-- CreateIndex
CREATE INDEX "task_instances_tenant_id_created_at_id_idx" ON "task_instances"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "task_instances_tenant_id_state_created_at_id_idx" ON "task_instances"("tenant_id", "state", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "task_instances_parent_instance_id_idx" ON "task_instances"("parent_instance_id");

-- CreateIndex
CREATE INDEX "block_outputs_instance_id_created_at_idx" ON "block_outputs"("instance_id", "created_at");

-- CreateIndex
CREATE INDEX "signals_instance_id_created_at_idx" ON "signals"("instance_id", "created_at");

-- CreateIndex
CREATE INDEX "worker_tasks_instance_id_idx" ON "worker_tasks"("instance_id");

-- CreateIndex
CREATE INDEX "worker_task_attempts_task_id_id_idx" ON "worker_task_attempts"("task_id", "id");

-- AddForeignKey
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tenant_storage_placements" ADD CONSTRAINT "tenant_storage_placements_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
