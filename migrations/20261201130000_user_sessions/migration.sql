-- Revocable sign-in sessions. The session token (a JWT) names one of these rows, and every
-- request reads the user together with it, so deleting the row ends the session at once. Sign-out
-- deletes its own row, and removal from the last tenant deletes all of the user's rows.
CREATE TABLE "user_sessions" (
  "id" TEXT NOT NULL,
  "user_id" UUID NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "user_sessions_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "user_sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "user_sessions_user_id_idx" ON "user_sessions" ("user_id");
