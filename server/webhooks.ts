// The public webhook's checks (wire-format L): its two rate limits and the signature.
//
// Rate limits, both token buckets of this web process (server/request-rate.ts): 300 requests/s
// per (client address, slug), as specified, and then, once the slug's tenant is known, the
// tenant's own webhook rate (the resource ledger's "public webhooks" row: BULKHEAD_WEBHOOK_RATE_PER_SEC,
// tiered), so a tenant flooded by its vendor is answered 429 without costing any other tenant's
// webhooks a token, a database row or a signature check.
//
// The signature: `x-orch8-signature: v1=` + base64url (no padding) of HMAC-SHA256 with the secret
// over `<timestamp>.<nonce>.<raw body>`, compared in constant time; the timestamp within
// [now - 300 s, now + 60 s]; the nonce 16..128 printable non-space ASCII characters.
import { createHmac, timingSafeEqual } from "node:crypto";
import { AppError } from "../engine/errors.ts";
import { ownRate, TokenBuckets, type BucketRate } from "./request-rate.ts";
import type { Services } from "./services.ts";
import { tenantLimitsCache } from "./tenant-limits-cache.ts";

export const WEBHOOK_BODY_LIMIT = 1024 * 1024;
export const REPLAY_WINDOW_SECS = 300;
export const FUTURE_SKEW_SECS = 60;
/** How long a nonce stays taken: the whole window a signed request could be accepted in. */
export const NONCE_TTL_SECS = REPLAY_WINDOW_SECS + FUTURE_SKEW_SECS;
const PER_ADDRESS_AND_SLUG: BucketRate = { ratePerSec: 300, burst: 300 };
const NONCE = /^[\x21-\x7e]{16,128}$/;

export const webhookRateLimited = () => new AppError("rate_limited", "public webhook request rate exceeded");

/** The HMAC a sender puts in `x-orch8-signature`. */
export function webhookSignature(secret: string, timestamp: string, nonce: string, body: Buffer): string {
  const mac = createHmac("sha256", Buffer.from(secret, "utf8")).update(`${timestamp}.${nonce}.`).update(body).digest("base64url");
  return `v1=${mac}`;
}

export type SignatureCheck = { ok: true; nonce: string } | { ok: false; reason: string };

/** Everything but the nonce's single use: timestamp window, nonce shape, then the signature. */
export function checkSignature(headers: Headers, body: Buffer, secret: string, nowSecs: number): SignatureCheck {
  const timestamp = headers.get("x-trigger-timestamp") ?? "";
  if (!/^\d{1,15}$/.test(timestamp)) return { ok: false, reason: "missing or malformed timestamp" };
  const ts = Number(timestamp);
  if (ts < nowSecs - REPLAY_WINDOW_SECS || ts > nowSecs + FUTURE_SKEW_SECS) return { ok: false, reason: "timestamp outside the replay window" };
  const nonce = headers.get("x-trigger-nonce") ?? "";
  if (!NONCE.test(nonce)) return { ok: false, reason: "missing or malformed nonce" };
  const given = Buffer.from(headers.get("x-orch8-signature") ?? "", "utf8");
  const expected = Buffer.from(webhookSignature(secret, timestamp, nonce, body), "utf8");
  // timingSafeEqual needs equal lengths; the length of a correct signature is public.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: "bad signature" };
  return { ok: true, nonce };
}

/** The plain shared-secret check of /fire: constant time, and a missing header fails like a wrong one. */
export function sameSecret(given: string | null, secret: string): boolean {
  const a = Buffer.from(given ?? "", "utf8");
  const b = Buffer.from(secret, "utf8");
  return a.length === b.length && given !== null && timingSafeEqual(a, b);
}

/** The two buckets of one web process. */
export class WebhookRates {
  readonly perAddress: TokenBuckets;
  readonly perTenant: TokenBuckets;

  /** `now`: milliseconds, Date.now unless a test brings its own clock. */
  constructor(ratePerSec: number, now?: () => number) {
    this.perAddress = new TokenBuckets({ ...PER_ADDRESS_AND_SLUG, now });
    this.perTenant = new TokenBuckets({ ratePerSec, burst: 2 * ratePerSec, now });
  }

  /** Refused when one (client address, slug) sends more than 300 requests/s. */
  admitAddress(address: string | null, slug: string): void {
    if (!this.perAddress.take(`${address ?? ""}\u0000${slug}`).ok) throw webhookRateLimited();
  }

  /** Refused past the tenant's webhook rate (its own, when an operator set one). */
  admitTenant(tenantId: string, ownPerSec: number | null): void {
    const rate = ownPerSec === null ? this.perTenant : ownRate(ownPerSec, this.perTenant);
    if (!this.perTenant.take(tenantId, rate).ok) throw webhookRateLimited();
  }
}

// On globalThis, so every bundle of the web server finds the same buckets (as server/request-rate.ts).
const REGISTRY = Symbol.for("bulkhead.webhookRates");

export function webhookRates(services: Services): WebhookRates {
  const global = globalThis as { [REGISTRY]?: WeakMap<Services, WebhookRates> };
  const rates = (global[REGISTRY] ??= new WeakMap());
  let rate = rates.get(services);
  if (!rate) rates.set(services, (rate = new WebhookRates(services.config.BULKHEAD_WEBHOOK_RATE_PER_SEC)));
  return rate;
}

/** The tenant's own webhook rate, or null for the default. */
export async function tenantWebhookRate(services: Services, tenantId: string): Promise<number | null> {
  return (await tenantLimitsCache(services).of(tenantId))?.webhookRatePerSec ?? null;
}
