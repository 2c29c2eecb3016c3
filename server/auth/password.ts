import bcrypt from "bcryptjs";

// bcrypt cost 11: ~100 ms per hash on this class of machine, above OWASP's minimum of 10.
const COST = 11;
export const MIN_PASSWORD_LENGTH = 8;
/** bcrypt reads only the first 72 bytes (UTF-8) of a password and bcryptjs ignores the rest silently. */
export const MAX_PASSWORD_BYTES = 72;

/** Why a password cannot be chosen (too short, or longer than bcrypt reads), or null when it can. */
export function newPasswordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (bcrypt.truncates(password)) return `must be at most ${MAX_PASSWORD_BYTES} bytes (UTF-8): bcrypt ignores the rest`;
  return null;
}

export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, COST);
}

// Compared against when the account does not exist, so a missing account costs the same time
// as a wrong password and sign-in timing does not reveal which emails are registered.
const DECOY_HASH = bcrypt.hashSync("decoy password for timing", COST);

export function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  return bcrypt.compare(password, hash ?? DECOY_HASH).then((ok) => ok && hash !== null);
}
