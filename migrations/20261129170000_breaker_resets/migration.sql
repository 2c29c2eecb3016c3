-- Every reset of a circuit breaker, by whom and when: the audit trail, and the feed engine
-- processes read to drop their in-memory state for that breaker (ids only grow).
CREATE TABLE "circuit_breaker_resets" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "handler" TEXT NOT NULL,
    "reset_by" TEXT NOT NULL,
    "reset_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "circuit_breaker_resets_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "circuit_breaker_resets_tenant_id_reset_at_idx" ON "circuit_breaker_resets" ("tenant_id", "reset_at" DESC);
