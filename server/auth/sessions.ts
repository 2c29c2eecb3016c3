// Revocable sessions. The session token (next-auth's JWT cookie) carries the user id and the id of
// a user_sessions row; a request is signed in only while that row exists. It is read together with
// the user row every request reads anyway (readSessionUser), so revocation costs no extra query.
import { randomBytes } from "node:crypto";
import type { Prisma } from "../db/prisma.ts";

/** Who a session token says is signed in. */
export interface SessionIdentity {
  userId: string;
  sessionId: string;
}

export interface SessionUser {
  id: string;
  email: string;
  isOperator: boolean;
}

/** next-auth's default session lifetime: a row older than this names a token that has expired. */
export const SESSION_MAX_AGE_MS = 30 * 24 * 3600 * 1000;

/**
 * A new session of the user (its id goes into the token); the user's expired ones go. With
 * `passwordHash` (the hash a sign-in just verified), only while it is still the user's: a
 * password change committed between the check and this insert ended every session, and a
 * session made now from the old password would outlive it. Then null.
 */
export async function startSession(prisma: Prisma, userId: string, options: { passwordHash?: string; now?: Date } = {}): Promise<string | null> {
  const id = randomBytes(32).toString("base64url");
  const now = options.now ?? new Date();
  const [, inserted] = await prisma.$transaction([
    prisma.userSession.deleteMany({ where: { userId, createdAt: { lt: new Date(now.getTime() - SESSION_MAX_AGE_MS) } } }),
    prisma.$executeRaw`
      INSERT INTO user_sessions (id, user_id)
      SELECT ${id}, id FROM users WHERE id = ${userId}::uuid AND (${options.passwordHash ?? null}::text IS NULL OR password_hash = ${options.passwordHash ?? null})`,
  ]);
  return inserted === 1 ? id : null;
}

/** The user, if the session is still theirs; null once it was ended (or never was). One query. */
export function readSessionUser(prisma: Prisma, identity: SessionIdentity | null): Promise<SessionUser | null> {
  if (!identity) return Promise.resolve(null);
  return prisma.user.findFirst({
    where: { id: identity.userId, sessions: { some: { id: identity.sessionId } } },
    select: { id: true, email: true, isOperator: true },
  });
}

/** Ends one session (sign-out). */
export async function endSession(prisma: Pick<Prisma, "userSession">, sessionId: string): Promise<void> {
  await prisma.userSession.deleteMany({ where: { id: sessionId } });
}

/** Ends every session of the user (removed from their last tenant, or signed out everywhere). */
export async function endSessionsOf(prisma: Pick<Prisma, "userSession">, userId: string): Promise<number> {
  return (await prisma.userSession.deleteMany({ where: { userId } })).count;
}

/** The identity in a next-auth session, or null when it names no session (tokens from before sessions were revocable). */
export function identityOf(session: { user?: { id?: string | null } | null; sessionId?: string | null } | null): SessionIdentity | null {
  const userId = session?.user?.id;
  const sessionId = session?.sessionId;
  return userId && sessionId ? { userId, sessionId } : null;
}
