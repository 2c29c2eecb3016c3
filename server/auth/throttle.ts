// Sign-in rate limiting per account and per client address, stored in PostgreSQL so every web
// process shares it. Only failures count; a success clears the account's counter.
import type { Prisma } from "../db/prisma.ts";

export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
const LIMITS = { account: 5, ip: 20 } as const;

export function throttleKeys(email: string, ip: string | null): { key: string; limit: number }[] {
  const keys: { key: string; limit: number }[] = [{ key: `account:${email}`, limit: LIMITS.account }];
  if (ip) keys.push({ key: `ip:${ip}`, limit: LIMITS.ip });
  return keys;
}

/** True when any key has used up its failures in the current window. */
export async function isThrottled(prisma: Prisma, keys: { key: string; limit: number }[], now = new Date()): Promise<boolean> {
  const rows = await prisma.signInThrottle.findMany({ where: { key: { in: keys.map((k) => k.key) } } });
  return rows.some((row) => {
    const limit = keys.find((k) => k.key === row.key)!.limit;
    return row.failures >= limit && now.getTime() - row.windowStartsAt.getTime() < THROTTLE_WINDOW_MS;
  });
}

export async function recordFailure(prisma: Prisma, keys: { key: string }[], now = new Date()): Promise<void> {
  const windowStart = new Date(now.getTime() - THROTTLE_WINDOW_MS);
  for (const { key } of keys) {
    // One statement per key: a new window starts when the old one has passed.
    await prisma.$executeRaw`
      INSERT INTO sign_in_throttles (key, failures, window_starts_at) VALUES (${key}, 1, ${now})
      ON CONFLICT (key) DO UPDATE SET
        failures = CASE WHEN sign_in_throttles.window_starts_at < ${windowStart} THEN 1 ELSE sign_in_throttles.failures + 1 END,
        window_starts_at = CASE WHEN sign_in_throttles.window_starts_at < ${windowStart} THEN ${now} ELSE sign_in_throttles.window_starts_at END`;
  }
}

export async function clearAccount(prisma: Prisma, email: string): Promise<void> {
  await prisma.signInThrottle.deleteMany({ where: { key: `account:${email}` } });
}
