-- The retention pruner (engine/retention): what it last found per tenant on this backend, for the
-- Resources page, and an index so an instance's dedupe rows go with it without a scan.
CREATE TABLE "retention_status" (
    "tenant_id" TEXT NOT NULL,
    -- Terminal instances past the tenant's retention when last counted, at most the count cap.
    "pending" INTEGER NOT NULL DEFAULT 0,
    "pending_capped" BOOLEAN NOT NULL DEFAULT false,
    "pruned_total" BIGINT NOT NULL DEFAULT 0,
    "counted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "last_pruned_at" TIMESTAMPTZ(3),
    CONSTRAINT "retention_status_pkey" PRIMARY KEY ("tenant_id")
);

CREATE INDEX "event_dedupe_child_idx" ON "event_dedupe" ("tenant_id", "child_instance_id");
