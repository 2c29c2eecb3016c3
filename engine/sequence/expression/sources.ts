/** Where `now()`, `random()` and `uuid()` come from; tests pass fixed ones. */
export interface ExpressionSources {
  now(): Date;
  /** In [0, 1). */
  random(): number;
  uuid(): string;
}

export const systemSources: ExpressionSources = {
  now: () => new Date(),
  random: () => Math.random(),
  uuid: randomUuid,
};

function randomUuid(): string {
  const crypto = globalThis.crypto;
  // Browsers expose randomUUID only in secure contexts; getRandomValues is always there.
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
