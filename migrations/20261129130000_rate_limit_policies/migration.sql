-- Rate-limit policies per tenant and key, set by operators. A key without a policy is unlimited.
CREATE TABLE "rate_limit_policies" (
    "tenant_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "max_count" INTEGER NOT NULL,
    "window_ms" BIGINT NOT NULL,

    CONSTRAINT "rate_limit_policies_pkey" PRIMARY KEY ("tenant_id","key"),
    CONSTRAINT "rate_limit_policies_max_count_check" CHECK ("max_count" > 0),
    CONSTRAINT "rate_limit_policies_window_ms_check" CHECK ("window_ms" > 0)
);

-- rate_limit_windows becomes an exact sliding window: a policy owns one row per unit it allows
-- (a slot), busy for window_ms from window_start, the time the slot was last taken. The old
-- fixed-window counter let up to twice the limit through at a window boundary. Nothing wrote it
-- yet, and rate-limit state is transient, so its rows go.
TRUNCATE "rate_limit_windows";

ALTER TABLE "rate_limit_windows"
  DROP CONSTRAINT "rate_limit_windows_pkey",
  DROP COLUMN "count",
  ADD COLUMN "slot" INTEGER NOT NULL,
  ADD CONSTRAINT "rate_limit_windows_pkey" PRIMARY KEY ("tenant_id","key","slot");

-- A consumer takes the longest-idle slot of its key.
CREATE INDEX "rate_limit_windows_tenant_id_key_window_start_idx"
  ON "rate_limit_windows" ("tenant_id", "key", "window_start");

-- A budget row always limits something. Zero steps is no budget, which is no row.
ALTER TABLE "tenant_budgets"
  ADD CONSTRAINT "tenant_budgets_steps_per_period_check" CHECK ("steps_per_period" > 0),
  ADD CONSTRAINT "tenant_budgets_period_secs_check" CHECK ("period_secs" > 0),
  ADD CONSTRAINT "tenant_budgets_used_check" CHECK ("used" >= 0);
