// The webhook checks on their own: the signature against a vector computed independently (openssl),
// the timestamp window's edges, the nonce's shape, the /fire secret, and the two rate buckets.
import { describe, expect, it } from "vitest";
import { isAppError } from "../engine/errors.ts";
import { checkSignature, sameSecret, WebhookRates, webhookSignature } from "./webhooks.ts";

// printf '1700000000.abcdefghijklmnop.{"a":1}' | openssl dgst -sha256 -hmac secret -binary | basenc --base64url | tr -d =
const VECTOR = "v1=x5ifXA1fd9mNp86Zj2simLmX_LQOF5PTSTZ94cmiFY8";

const headers = (values: Record<string, string>) => new Headers(values);
const body = Buffer.from('{"a":1}');
const good = { "x-trigger-timestamp": "1700000000", "x-trigger-nonce": "abcdefghijklmnop", "x-orch8-signature": VECTOR };

describe("webhook signatures", () => {
  it("are HMAC-SHA256 over timestamp.nonce.body, base64url without padding", () => {
    expect(webhookSignature("secret", "1700000000", "abcdefghijklmnop", body)).toBe(VECTOR);
    expect(checkSignature(headers(good), body, "secret", 1_700_000_000)).toEqual({ ok: true, nonce: "abcdefghijklmnop" });
  });

  it("accept a timestamp from 300 s before now to 60 s after, and nothing outside", () => {
    const at = (now: number) => checkSignature(headers(good), body, "secret", now).ok;
    expect([at(1_700_000_300), at(1_700_000_301), at(1_699_999_940), at(1_699_999_939)]).toEqual([true, false, true, false]);
  });

  it("refuse a malformed timestamp or nonce before looking at the signature", () => {
    const reason = (changes: Record<string, string>) => {
      const check = checkSignature(headers({ ...good, ...changes }), body, "secret", 1_700_000_000);
      return check.ok ? "ok" : check.reason;
    };
    expect(reason({ "x-trigger-timestamp": "17e8" })).toBe("missing or malformed timestamp");
    expect(reason({ "x-trigger-nonce": "x".repeat(129) })).toBe("missing or malformed nonce");
    expect(reason({ "x-trigger-nonce": "tab\there-abcdefgh" })).toBe("missing or malformed nonce");
    expect(reason({ "x-orch8-signature": VECTOR.slice(0, -1) })).toBe("bad signature");
    expect(reason({ "x-orch8-signature": VECTOR.replace("v1=", "v2=") })).toBe("bad signature");
  });
});

describe("the /fire secret", () => {
  it("matches only the same secret; a missing header never matches", () => {
    expect([sameSecret("abc", "abc"), sameSecret("abd", "abc"), sameSecret("abcd", "abc"), sameSecret(null, "abc")]).toEqual([true, false, false, false]);
  });
});

describe("webhook rates", () => {
  const refused = (take: () => void) => {
    try {
      take();
      return false;
    } catch (error) {
      return isAppError(error, "rate_limited");
    }
  };

  it("hold one (address, slug) to 300 a second without touching another address or slug", () => {
    let now = 0;
    const rates = new WebhookRates(100, () => now);
    const takes = Array.from({ length: 301 }, () => refused(() => rates.admitAddress("10.0.0.1", "hook")));
    expect(takes.filter(Boolean)).toHaveLength(1);
    expect(refused(() => rates.admitAddress("10.0.0.2", "hook"))).toBe(false);
    expect(refused(() => rates.admitAddress("10.0.0.1", "other"))).toBe(false);
    now += 1_000;
    expect(refused(() => rates.admitAddress("10.0.0.1", "hook"))).toBe(false);
  });

  it("hold a tenant to its rate with a burst of twice it, its own rate when it has one, and no other tenant", () => {
    let now = 0;
    const rates = new WebhookRates(5, () => now);
    const burst = Array.from({ length: 11 }, () => refused(() => rates.admitTenant("noisy", null)));
    expect(burst.filter(Boolean)).toHaveLength(1); // 10 pass
    expect(refused(() => rates.admitTenant("quiet", null))).toBe(false);
    const own = Array.from({ length: 3 }, () => refused(() => rates.admitTenant("small", 1)));
    expect(own).toEqual([false, false, true]);
    now += 1_000;
    expect(refused(() => rates.admitTenant("small", 1))).toBe(false);
  });
});
