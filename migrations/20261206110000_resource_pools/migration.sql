-- Resource pools (wire-format U): a tenant's named sets of interchangeable resources (sender
-- accounts, numbers, keys) with a rotation strategy, and per resource a weight, a daily cap and a
-- warm-up ramp. CRUD-only state: no step reads them (engine/pools/select.ts holds the selection
-- rules). Counters are u32 on the wire, hence BIGINT with range checks.
CREATE TABLE "resource_pools" (
    "tenant_id" TEXT NOT NULL,
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "strategy" TEXT NOT NULL DEFAULT 'round_robin',
    "round_robin_index" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "resource_pools_pkey" PRIMARY KEY ("tenant_id", "id"),
    CONSTRAINT "resource_pools_strategy_check" CHECK ("strategy" IN ('round_robin', 'weighted', 'random')),
    CONSTRAINT "resource_pools_round_robin_index_check" CHECK ("round_robin_index" BETWEEN 0 AND 4294967295)
);

-- No foreign key to the pool, as no data-plane table has one: a pool and its resources are
-- deleted in one transaction (engine/storage/pools.ts), and tenant moves copy tables in any order.
CREATE TABLE "pool_resources" (
    "tenant_id" TEXT NOT NULL,
    "id" UUID NOT NULL,
    "pool_id" UUID NOT NULL,
    "resource_key" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "weight" BIGINT NOT NULL DEFAULT 1,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "daily_cap" BIGINT NOT NULL DEFAULT 0,
    "daily_usage" BIGINT NOT NULL DEFAULT 0,
    "daily_usage_date" DATE,
    "warmup_start" DATE,
    "warmup_days" BIGINT NOT NULL DEFAULT 0,
    "warmup_start_cap" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "pool_resources_pkey" PRIMARY KEY ("tenant_id", "id"),
    CONSTRAINT "pool_resources_counts_check" CHECK (
        "weight" BETWEEN 1 AND 4294967295 AND "daily_cap" BETWEEN 0 AND 4294967295 AND "daily_usage" BETWEEN 0 AND 4294967295
        AND "warmup_days" BETWEEN 0 AND 4294967295 AND "warmup_start_cap" BETWEEN 0 AND 4294967295
    )
);

-- A pool's resources, listed by name (and deleted with the pool).
CREATE INDEX "pool_resources_pool_idx" ON "pool_resources" ("tenant_id", "pool_id");
