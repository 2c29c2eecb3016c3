// A live stream outlives the request that opened it, so the session and membership it was opened
// with are checked again while it runs: sign-out, a password change, "sign out everywhere" or
// removal from the tenant ends the stream within one check, as the next request would be refused.
import type { Prisma } from "../db/prisma.ts";
import { readSessionUser, type SessionIdentity } from "../auth/sessions.ts";
import { roleIn } from "../control/users.ts";

/** How often an open stream checks that its session and membership still hold. */
export const SESSION_RECHECK_MS = 5_000;

/** Whether the session still exists and its user is still a member of the tenant. */
export async function stillMember(prisma: Prisma, identity: SessionIdentity | null, tenantId: string): Promise<boolean> {
  const user = await readSessionUser(prisma, identity);
  return user !== null && (await roleIn(prisma, tenantId, user.id)) !== null;
}

/**
 * A signal aborted when `request` ends or when `holds` answers false (checked every `everyMs`);
 * a failing check keeps the stream (a database blip must not cut every stream).
 */
export function whileSessionHolds(request: AbortSignal, holds: () => Promise<boolean>, everyMs = SESSION_RECHECK_MS): AbortSignal {
  const ended = new AbortController();
  const timer = setInterval(() => {
    holds().then((ok) => { if (!ok) ended.abort("session ended"); }, () => {});
  }, everyMs);
  timer.unref();
  const signal = AbortSignal.any([request, ended.signal]);
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  return signal;
}
