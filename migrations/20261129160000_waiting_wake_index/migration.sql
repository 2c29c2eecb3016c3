-- Waiting instances with a wake-up time (a human-input gate that times out) are found by the
-- reaper through this index. Most waiting instances have none and are not in it.
CREATE INDEX "task_instances_waiting_wake_idx"
  ON "task_instances" ("next_fire_at")
  WHERE "state" = 'waiting' AND "next_fire_at" IS NOT NULL;
