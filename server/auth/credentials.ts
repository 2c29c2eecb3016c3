// Email + password sign-in, rate limited per account and per client address.
import { unstorableText } from "../../engine/text-hygiene.ts";
import { AppError } from "../../engine/errors.ts";
import type { Prisma } from "../db/prisma.ts";
import { verifyPassword } from "./password.ts";
import { clearAccount, isThrottled, recordFailure, throttleKeys } from "./throttle.ts";

export interface SignedInUser {
  id: string;
  email: string;
  name: string;
  /** The hash the password was checked against: the session is made only while it is still the user's. */
  verifiedHash: string;
}

/**
 * The user for these credentials. Throws `unauthorized` for a wrong email or password (one
 * answer for both) and `rate_limited` while the account or address has too many recent failures.
 */
export async function authenticateCredentials(
  prisma: Prisma,
  input: { email: string; password: string; ip: string | null },
): Promise<SignedInUser> {
  // Text no account can have (NUL, a lone surrogate) is no account: a wrong password, counted
  // against the address only, and never sent to the database.
  const email = unstorableText(input.email) ? "" : input.email.trim().toLowerCase().slice(0, 254);
  const keys = throttleKeys(email, input.ip);
  if (await isThrottled(prisma, keys)) throw new AppError("rate_limited", "too many failed sign-ins");
  const user = email ? await prisma.user.findUnique({ where: { email } }) : null;
  if (!(await verifyPassword(input.password, user?.passwordHash ?? null)) || !user) {
    await recordFailure(prisma, keys);
    throw new AppError("unauthorized", "wrong email or password");
  }
  await clearAccount(prisma, email);
  return { id: user.id, email: user.email, name: user.name, verifiedHash: user.passwordHash };
}
