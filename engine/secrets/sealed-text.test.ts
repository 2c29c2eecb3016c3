import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { keyringFromEnv, needsResealing, open, seal } from "./sealed-text.ts";

const key = () => randomBytes(32).toString("hex");

describe("sealed text", () => {
  it("seals with a fresh nonce each time and opens again", () => {
    const ring = keyringFromEnv({ BULKHEAD_ENCRYPTION_KEY: key() });
    const [a, b] = [seal("s3cret", ring), seal("s3cret", ring)];
    expect(a).toMatch(/^enc:v1:/);
    expect(a).not.toContain("s3cret");
    expect(a).not.toBe(b);
    expect([open(a, ring), open(b, ring)]).toEqual(["s3cret", "s3cret"]);
  });

  it("without a key stores plaintext, which any key ring reads", () => {
    const plain = seal("visible", keyringFromEnv({}));
    expect(plain).toBe("visible");
    expect(open(plain, keyringFromEnv({ BULKHEAD_ENCRYPTION_KEY: key() }))).toBe("visible");
  });

  it("after a rotation, opens with the old key, and marks old-key and plaintext values for resealing", () => {
    const [oldKey, newKey] = [key(), key()];
    const before = keyringFromEnv({ BULKHEAD_ENCRYPTION_KEY: oldKey });
    const after = keyringFromEnv({ BULKHEAD_ENCRYPTION_KEY: newKey, BULKHEAD_OLD_ENCRYPTION_KEY: oldKey });
    const stored = seal("rotate me", before);
    expect(open(stored, after)).toBe("rotate me");
    expect(needsResealing(stored, after)).toBe(true);
    expect(needsResealing(seal("rotate me", after), after)).toBe(false);
    expect(needsResealing("plaintext", after)).toBe(true);
    expect(() => open(stored, keyringFromEnv({ BULKHEAD_ENCRYPTION_KEY: newKey }))).toThrow(/could not be opened/);
  });

  it("refuses a key that is not 64 hex characters", () => {
    expect(() => keyringFromEnv({ BULKHEAD_ENCRYPTION_KEY: "short" })).toThrow(/64 hexadecimal/);
  });

  it("a tampered value does not open", () => {
    const ring = keyringFromEnv({ BULKHEAD_ENCRYPTION_KEY: key() });
    const stored = seal("x", ring);
    const bytes = Buffer.from(stored.slice(7), "base64");
    bytes[bytes.length - 1]! ^= 1;
    expect(() => open(`enc:v1:${bytes.toString("base64")}`, ring)).toThrow();
  });
});
