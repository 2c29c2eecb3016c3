// Secrets at rest: AES-256-GCM with a random 96-bit nonce per value, stored as
// `enc:v1:` + base64(nonce ‖ ciphertext ‖ tag). The key is BULKHEAD_ENCRYPTION_KEY (64 hex
// characters, generated into .data by `npm start` when unset); BULKHEAD_OLD_ENCRYPTION_KEY is
// tried only when the key fails, so a rotated key keeps old rows readable until they are next
// written (with the new key). Text without the prefix is plaintext from before a key was set.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const PREFIX = "enc:v1:";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_HEX = /^[0-9a-fA-F]{64}$/;

export interface Keyring {
  /** Seals every write; null: secrets are stored as plaintext (the engine warns at start). */
  primary: Buffer | null;
  /** Opens what the primary cannot. */
  old: Buffer | null;
}

function keyOf(name: string, value: string | undefined): Buffer | null {
  if (!value) return null;
  if (!KEY_HEX.test(value)) throw new Error(`${name} must be 64 hexadecimal characters (32 bytes)`);
  return Buffer.from(value, "hex");
}

/** The keys of this process's environment, read on each use so a rotation needs only a restart. */
export function keyringFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): Keyring {
  return { primary: keyOf("BULKHEAD_ENCRYPTION_KEY", env.BULKHEAD_ENCRYPTION_KEY), old: keyOf("BULKHEAD_OLD_ENCRYPTION_KEY", env.BULKHEAD_OLD_ENCRYPTION_KEY) };
}

export const isSealed = (stored: string) => stored.startsWith(PREFIX);

export function seal(plaintext: string, keyring: Keyring = keyringFromEnv()): string {
  if (!keyring.primary) return plaintext;
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", keyring.primary, nonce);
  const sealed = Buffer.concat([nonce, cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return PREFIX + sealed.toString("base64");
}

function openWith(key: Buffer, sealed: Buffer): string | null {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

/** The plaintext of a stored value; throws when no key of the ring opens it. */
export function open(stored: string, keyring: Keyring = keyringFromEnv()): string {
  if (!isSealed(stored)) return stored;
  const sealed = Buffer.from(stored.slice(PREFIX.length), "base64");
  for (const key of [keyring.primary, keyring.old]) {
    const plaintext = key && sealed.length >= NONCE_BYTES + TAG_BYTES ? openWith(key, sealed) : null;
    if (plaintext !== null) return plaintext;
  }
  throw new Error("a sealed secret could not be opened with BULKHEAD_ENCRYPTION_KEY or BULKHEAD_OLD_ENCRYPTION_KEY");
}

/** Whether a stored value should be written again: plaintext while a key is set, or sealed under a key other than the primary. */
export function needsResealing(stored: string, keyring: Keyring = keyringFromEnv()): boolean {
  if (!keyring.primary) return false;
  if (!isSealed(stored)) return true;
  return openWith(keyring.primary, Buffer.from(stored.slice(PREFIX.length), "base64")) === null;
}
