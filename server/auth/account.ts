// Ending a user's sessions on purpose: a password change ends every one of them (the caller's own
// included, so every browser signs in again with the new password), and so does "sign out
// everywhere", asked by the user or, for any user, by an operator. Each is audited in the same
// transaction as the change it records.
import { AppError, notFound } from "../../engine/errors.ts";
import { recordAudit } from "../control/audit.ts";
import { normalizeEmail } from "../control/users.ts";
import type { Prisma } from "../db/prisma.ts";
import { hashPassword, newPasswordProblem, verifyPassword } from "./password.ts";
import { endSessionsOf } from "./sessions.ts";
import { clearAccount, isThrottled, recordFailure, throttleKeys } from "./throttle.ts";

/** Who asks, as the audit log names them: an email or "cli". */
export interface Actor {
  actor: string;
  actorUserId?: string | null;
}

/**
 * Replaces the user's password after checking the current one, and ends every session of the
 * user in the same transaction. A wrong current password counts against the account's sign-in
 * throttle (server/auth/throttle.ts): a stolen session cannot be used to guess the password
 * faster than the sign-in form allows. Returns how many sessions ended.
 */
export async function changePassword(
  prisma: Prisma,
  input: { userId: string; currentPassword: string; newPassword: string },
): Promise<{ ended: number }> {
  const problem = newPasswordProblem(input.newPassword);
  if (problem) throw new AppError("invalid_argument", `the new password ${problem}`, ["newPassword"]);
  const user = await prisma.user.findUnique({ where: { id: input.userId }, select: { id: true, email: true, passwordHash: true } });
  if (!user) throw notFound("user");
  const keys = throttleKeys(user.email, null);
  if (await isThrottled(prisma, keys)) {
    throw new AppError("rate_limited", "too many wrong passwords for this account: wait 15 minutes and try again");
  }
  if (!(await verifyPassword(input.currentPassword, user.passwordHash))) {
    await recordFailure(prisma, keys);
    throw new AppError("invalid_argument", "the current password is wrong", ["currentPassword"]);
  }
  if (input.newPassword === input.currentPassword) {
    throw new AppError("invalid_argument", "the new password is the current one: choose another", ["newPassword"]);
  }
  // Hashed before the transaction: bcrypt's ~100 ms need not hold it open.
  const passwordHash = await hashPassword(input.newPassword);
  const ended = await prisma.$transaction(async (tx) => {
    // Only over the hash that was checked: of two changes at once, the second finds it gone.
    const { count } = await tx.user.updateMany({ where: { id: user.id, passwordHash: user.passwordHash }, data: { passwordHash } });
    if (count === 0) throw new AppError("conflict", "the password was changed meanwhile: sign in again with the new one");
    const ended = await endSessionsOf(tx, user.id);
    await recordAudit(tx, { actor: user.email, actorUserId: user.id, action: "user.password", details: { email: user.email, sessions_ended: ended } });
    return ended;
  });
  await clearAccount(prisma, user.email);
  return { ended };
}

/** Ends every session of the user, audited as asked by `by`. Returns how many ended. */
export async function signOutEverywhere(prisma: Prisma, user: { id: string; email: string }, by: Actor): Promise<number> {
  return prisma.$transaction(async (tx) => {
    const ended = await endSessionsOf(tx, user.id);
    await recordAudit(tx, { ...by, action: "user.sessions.end", details: { email: user.email, ended } });
    return ended;
  });
}

/** "Sign out everywhere" for the account with this email (operators, the CLI): `user not found` when there is none. */
export async function signOutEverywhereByEmail(prisma: Prisma, email: string, by: Actor): Promise<{ email: string; ended: number }> {
  const normalized = normalizeEmail(email);
  const user = await prisma.user.findUnique({ where: { email: normalized }, select: { id: true, email: true } });
  if (!user) throw notFound("user");
  return { email: user.email, ended: await signOutEverywhere(prisma, user, by) };
}
