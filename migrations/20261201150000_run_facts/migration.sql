-- The run facts of context.runtime (started_at, current_step, its start and attempt, the steps
-- executed), kept by the engine in columns of their own: a commit sets them without rewriting
-- the context, which may be large. Reads put them into context.runtime.
ALTER TABLE "task_instances"
  ADD COLUMN "started_at" TIMESTAMPTZ(3),
  ADD COLUMN "current_step" TEXT,
  ADD COLUMN "current_step_started_at" TIMESTAMPTZ(3),
  ADD COLUMN "current_attempt" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "steps_executed" INTEGER NOT NULL DEFAULT 0;
