-- Fields of the instance create request (wire-format E.5) and the time an instance ended.
ALTER TABLE "task_instances"
  ADD COLUMN "concurrency_key" TEXT,
  ADD COLUMN "max_concurrency" INTEGER,
  ADD COLUMN "session_id" TEXT,
  ADD COLUMN "budget" JSONB,
  ADD COLUMN "dry_run" BOOLEAN NOT NULL DEFAULT false,
  ADD COLUMN "completed_at" TIMESTAMPTZ(3);
