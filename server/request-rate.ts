// API request rates, the resource ledger's "API requests" row: a token bucket per (principal,
// tenant) in the web process, BULKHEAD_API_RATE_PER_SEC on average and BULKHEAD_API_BURST at once,
// or the tenant's own rate (tenant_limits.api_rate_per_sec, tiered) with a burst in proportion.
// A principal is an API key (REST) or a signed-in user (tRPC); each key has its own buckets, so two
// keys of one tenant do not share one, and neither do two users. The tenant is the one the request
// acts for; an operator key acting for no tenant (and a user outside tenant procedures) has a
// bucket of its own, keyed by the principal alone.
//
// The bucket is taken at the entry, once the caller and its tenant are known and before any other
// work: REST in server/rest/index.ts, tRPC in the procedure middleware of server/api/trpc.ts. A
// refusal is an AppError "rate_limited" carrying its Retry-After (whole seconds, at least 1), so it
// is answered 429 / TOO_MANY_REQUESTS like every other error, and costs no more work, except that
// the first refusal of a (principal, tenant) in a clock minute writes one audit-log row
// (`api.throttled`). The refusals of the current minute are counted in memory
// (throttledLastMinute) for the operator's Resources page.
//
// Memory is bounded: a bucket idle long enough to have refilled is the same as no bucket, so it is
// dropped (buckets are kept least recently used first, and every take drops the idle ones at the
// front); past MAX_BUCKETS the least recently used one goes, whatever its level.
import { AppError, isAppError } from "../engine/errors.ts";
import { createLogger, type Logger } from "../engine/logger.ts";
import { recordAudit } from "./control/audit.ts";
import type { Services } from "./services.ts";
import { tenantLimitsCache } from "./tenant-limits-cache.ts";

/** Buckets (and refusal counters) kept at most per web process. */
export const MAX_BUCKETS = 100_000;
const MINUTE_MS = 60_000;

// ------------------------------------------------------------------ the token buckets

export interface TokenBucketOptions {
  /** Tokens added per second. */
  ratePerSec: number;
  /** The most tokens a bucket holds: requests that may come at once. */
  burst: number;
  /** Milliseconds; Date.now unless a test brings its own clock. */
  now?: () => number;
  maxBuckets?: number;
}

export type Take = { ok: true } | { ok: false; retryAfterSecs: number };

interface Bucket {
  tokens: number;
  /** When `tokens` was computed (ms). */
  at: number;
  /** When it will have refilled if untouched (ms): from then on it is as good as no bucket. */
  fullAt: number;
}

/** A bucket's rate: the buckets' own, or a tenant's (tiered). */
export interface BucketRate {
  ratePerSec: number;
  burst: number;
}

/** Token buckets by key, least recently used first, bounded. */
export class TokenBuckets {
  readonly ratePerSec: number;
  readonly burst: number;
  readonly now: () => number;
  private readonly maxBuckets: number;
  /** Map order is the order of last use: every take re-inserts its key. */
  private readonly buckets = new Map<string, Bucket>();

  constructor(options: TokenBucketOptions) {
    checkRate(options);
    this.ratePerSec = options.ratePerSec;
    this.burst = options.burst;
    this.now = options.now ?? Date.now;
    this.maxBuckets = options.maxBuckets ?? MAX_BUCKETS;
  }

  get size(): number {
    return this.buckets.size;
  }

  /** One token of `key`'s bucket, or how many whole seconds until there is one (at least 1). */
  take(key: string, rate: BucketRate = this): Take {
    const { ratePerSec, burst } = rate;
    const now = this.now();
    this.sweep(now);
    const bucket = this.buckets.get(key);
    let tokens = burst;
    if (bucket) {
      this.buckets.delete(key);
      tokens = Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.at) * ratePerSec) / 1000);
    } else if (this.buckets.size >= this.maxBuckets) {
      // Full of buckets in use: the least recently used one goes (it restarts full if it comes back).
      this.buckets.delete(this.buckets.keys().next().value!);
    }
    const left = tokens >= 1 ? tokens - 1 : tokens;
    this.buckets.set(key, { tokens: left, at: now, fullAt: now + ((burst - left) / ratePerSec) * 1000 });
    if (tokens >= 1) return { ok: true };
    return { ok: false, retryAfterSecs: Math.max(1, Math.ceil((1 - tokens) / ratePerSec)) };
  }

  /** Drops the buckets at the front (least recently used) that have refilled since their last use. */
  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (now < bucket.fullAt) return;
      this.buckets.delete(key);
    }
  }
}

function checkRate(rate: BucketRate): void {
  if (!(rate.ratePerSec > 0) || !(rate.burst >= 1)) throw new Error("a token bucket needs a rate above 0 and a burst of at least 1");
}

// ------------------------------------------------------------------ principals, refusals, audit

export type PrincipalKind = "api_key" | "user";

export interface RatePrincipal {
  kind: PrincipalKind;
  /** The API key's id or the user's id. */
  id: string;
}

/** Who is asking, as the audit log names them. */
export interface Caller extends RatePrincipal {
  /** The audit log's actor: a user's email, or (looked up only when a row is written) a key's prefix. */
  actor: string | (() => Promise<string>);
  actorUserId?: string | null;
}

export interface Throttled {
  /** The tenant the refused requests acted for; null: an operator key (or user) acting for no tenant. */
  tenantId: string | null;
  /** `name` is the user's email or the key's prefix (null until the audit row has looked it up). */
  principal: RatePrincipal & { name: string | null };
  /** Requests refused in the current clock minute. */
  refused: number;
}

interface Refusals extends Throttled {
  /** The clock minute (ms since the epoch / 60 000) `refused` counts. */
  minute: number;
}

export interface Refusal {
  retryAfterSecs: number;
  /** The first refusal of this (principal, tenant) in this minute: the one that writes the audit row. */
  first: boolean;
  refusals: Refusals;
}

/** The buckets and this minute's refusals of one web process (one Services). */
export class RequestRate {
  readonly buckets: TokenBuckets;
  private readonly maxEntries: number;
  /** This minute's refusals by bucket key, least recently refused first. */
  private readonly refusals = new Map<string, Refusals>();
  private minute = -1;

  constructor(options: TokenBucketOptions) {
    this.buckets = new TokenBuckets(options);
    this.maxEntries = options.maxBuckets ?? MAX_BUCKETS;
  }

  /** null: admitted. Otherwise the refusal, counted. `rate`: the tenant's own, if it has one. */
  take(principal: RatePrincipal, tenantId: string | null, rate?: BucketRate): Refusal | null {
    const key = bucketKey(principal, tenantId);
    const taken = this.buckets.take(key, rate);
    if (taken.ok) return null;
    const minute = this.currentMinute();
    let refusals = this.refusals.get(key);
    const first = refusals === undefined;
    if (refusals) {
      this.refusals.delete(key);
    } else {
      if (this.refusals.size >= this.maxEntries) this.refusals.delete(this.refusals.keys().next().value!);
      refusals = { tenantId, principal: { kind: principal.kind, id: principal.id, name: null }, refused: 0, minute };
    }
    refusals.refused += 1;
    this.refusals.set(key, refusals);
    return { retryAfterSecs: taken.retryAfterSecs, first, refusals };
  }

  /** Every (principal, tenant) refused in the current clock minute, the most refused first. */
  throttledLastMinute(): Throttled[] {
    this.currentMinute();
    return [...this.refusals.values()]
      .sort((a, b) => b.refused - a.refused)
      .map(({ tenantId, principal, refused }) => ({ tenantId, principal: { ...principal }, refused }));
  }

  /** The clock minute now; a new one starts every count (and every audit row) afresh. */
  private currentMinute(): number {
    const minute = Math.floor(this.buckets.now() / MINUTE_MS);
    if (minute !== this.minute) {
      this.minute = minute;
      this.refusals.clear();
    }
    return minute;
  }
}

function bucketKey(principal: RatePrincipal, tenantId: string | null): string {
  return `${principal.kind}:${principal.id}\u0000${tenantId ?? ""}`;
}

// ------------------------------------------------------------------ the web process's one

// On globalThis, so every bundle of the web server (Next bundles server code more than once, and
// the REST and tRPC routes are separate bundles) finds the same buckets for the same Services.
const REGISTRY = Symbol.for("bulkhead.requestRate");
interface Registry {
  rates: WeakMap<Services, RequestRate>;
  loggers: WeakMap<Services, Logger>;
}

function registry(): Registry {
  const global = globalThis as { [REGISTRY]?: Registry };
  return (global[REGISTRY] ??= { rates: new WeakMap(), loggers: new WeakMap() });
}

/** The process's request rate for `services`, made from its configuration on first use. */
export function requestRate(services: Services): RequestRate {
  const { rates } = registry();
  let rate = rates.get(services);
  if (!rate) {
    rate = new RequestRate({ ratePerSec: services.config.BULKHEAD_API_RATE_PER_SEC, burst: services.config.BULKHEAD_API_BURST });
    rates.set(services, rate);
  }
  return rate;
}

/** Replaces the request rate of `services` (tests: their own clock, rate or burst). */
export function setRequestRate(services: Services, rate: RequestRate): void {
  registry().rates.set(services, rate);
}

/** Every (principal, tenant) refused in the current clock minute, with its count, the most refused first. */
export function throttledLastMinute(services: Services): Throttled[] {
  return requestRate(services).throttledLastMinute();
}

/** Whole seconds until a refused request may be tried again, if `error` is a rate refusal. */
export function retryAfterOf(error: unknown): number | null {
  if (!isAppError(error, "rate_limited")) return null;
  const secs = (error as AppError & { retryAfterSecs?: unknown }).retryAfterSecs;
  return typeof secs === "number" ? secs : null;
}

function rateLimited(retryAfterSecs: number): AppError {
  return Object.assign(new AppError("rate_limited", `retry after ${retryAfterSecs} s`), { retryAfterSecs });
}

/**
 * Takes one request of `caller` acting for `tenantId` (null: for no tenant), or throws the
 * refusal. The first refusal of the minute writes its audit row first (a failed write is logged,
 * and the answer is still the refusal); any other refusal touches nothing.
 */
export async function admitRequest(services: Services, caller: Caller, tenantId: string | null): Promise<void> {
  const rate = requestRate(services);
  const own = tenantId === null ? null : ((await tenantLimitsCache(services).of(tenantId))?.apiRatePerSec ?? null);
  const bucketRate = own === null ? rate.buckets : ownRate(own, rate.buckets);
  const refusal = rate.take(caller, tenantId, bucketRate);
  if (!refusal) return;
  if (refusal.first) {
    try {
      const actor = typeof caller.actor === "string" ? caller.actor : await caller.actor();
      refusal.refusals.principal.name = actor;
      await recordAudit(services.prisma, {
        actor,
        actorUserId: caller.actorUserId ?? null,
        tenantId,
        action: "api.throttled",
        details: {
          principal: caller.kind,
          rate_per_sec: bucketRate.ratePerSec,
          burst: bucketRate.burst,
          retry_after_secs: refusal.retryAfterSecs,
        },
      });
    } catch (error) {
      loggerFor(services).error({ err: error, tenant_id: tenantId, principal: caller.kind }, "could not record a throttled caller");
    }
  }
  throw rateLimited(refusal.retryAfterSecs);
}

/** A tenant's own rate, with a burst in the same proportion to it as the default burst to the default rate. */
export function ownRate(ratePerSec: number, defaults: BucketRate): BucketRate {
  return { ratePerSec, burst: Math.max(1, Math.round((ratePerSec * defaults.burst) / defaults.ratePerSec)) };
}

function loggerFor(services: Services): Logger {
  const { loggers } = registry();
  let log = loggers.get(services);
  if (!log) loggers.set(services, (log = createLogger("request-rate", services.config.BULKHEAD_LOG_LEVEL)));
  return log;
}
