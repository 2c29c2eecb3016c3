-- Invitations: members join a tenant by accepting one (server/control/invitations.ts), so adding
-- an email answers the same whether or not it has an account. Only the SHA-256 hash of the
-- one-time token is stored. An invitation is used once: accepting sets accepted_at with an UPDATE
-- that requires it to be still unset, and revoking (by an admin, by a replacement or by the
-- invitee declining) sets revoked_at. Never both, says the CHECK.
CREATE TABLE "invitations" (
  "id" UUID NOT NULL,
  "tenant_id" TEXT NOT NULL,
  "email" TEXT NOT NULL,
  "role" "membership_role" NOT NULL,
  "token_hash" TEXT NOT NULL,
  "invited_by_user_id" UUID,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "expires_at" TIMESTAMPTZ(3) NOT NULL,
  "accepted_at" TIMESTAMPTZ(3),
  "revoked_at" TIMESTAMPTZ(3),
  CONSTRAINT "invitations_pkey" PRIMARY KEY ("id"),
  CONSTRAINT "invitations_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
  CONSTRAINT "invitations_invited_by_user_id_fkey" FOREIGN KEY ("invited_by_user_id") REFERENCES "users" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
  CONSTRAINT "invitations_used_once_check" CHECK ("accepted_at" IS NULL OR "revoked_at" IS NULL)
);
CREATE UNIQUE INDEX "invitations_token_hash_key" ON "invitations" ("token_hash");
CREATE INDEX "invitations_tenant_id_idx" ON "invitations" ("tenant_id");
-- At most one open invitation per address and tenant: inviting again revokes the open one first
-- (expired ones included) in the same transaction, so an old link never outlives its replacement.
CREATE UNIQUE INDEX "invitations_open_email_key" ON "invitations" ("tenant_id", "email") WHERE "accepted_at" IS NULL AND "revoked_at" IS NULL;
