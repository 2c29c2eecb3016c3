// In-memory circuit breakers, one per (tenant, handler). Never per handler alone: one tenant's
// broken endpoint must not reject every tenant using the same handler (the blast radius the
// engine exists to contain).
//
// Closed -> Open after `threshold` consecutive failures (retryable or permanent alike); Open ->
// HalfOpen once the cooldown has passed, admitting exactly one probe; HalfOpen -> Closed on the
// probe's success, back to Open (fresh cooldown) on its failure. A probe that never reports (its
// process died, the step was cancelled) is replaced by a new one after another cooldown.
//
// Memory: tenants and handlers are user data, so the maps hold only breakers that say something:
// an entry exists while a breaker has failures or is Open/HalfOpen. A closed breaker with no
// failures is dropped (a success or a reset deletes it), and "no entry" means exactly that state,
// so every healthy (tenant, handler) pair costs nothing. Entries are created lazily by the first
// failure (or restoreOpen); snapshot() lists only these. If the held entries still reach
// `maxEntries` (many pairs that failed once and never ran again), closed entries whose last
// failure is older than their cooldown are dropped: they forget a stale partial count, never an
// Open breaker.
//
// Persistence is the caller's (engine/scheduler/breaker-sync.ts): it mirrors the transitions
// emitted here (Open written, leaving Open deleted) and feeds back restoreOpen and reset.
import { isTracked } from "./tracked.ts";

export type BreakerState = "closed" | "open" | "half_open";

export interface BreakerSettings {
  threshold: number;
  cooldownMs: number;
}

export type BreakerTransition =
  | { kind: "opened"; tenantId: string; handler: string; failureCount: number; openedAt: number }
  /** Left Open/HalfOpen through a success (the probe's, or a late success of an earlier call). */
  | { kind: "closed"; tenantId: string; handler: string };

export interface BreakerSnapshot {
  tenantId: string;
  handler: string;
  state: BreakerState;
  failureCount: number;
  failureThreshold: number;
  cooldownSecs: number;
  openedAt: number | null;
}

export interface RegistryOptions {
  defaults: BreakerSettings;
  onTransition?: (transition: BreakerTransition) => void;
  /**
   * Per-(tenant, handler) settings, already clamped to the operator's bounds; undefined means the
   * defaults. Never asked on the closed path of check(): only when a failure is counted, when a
   * tripped breaker is checked, and by snapshot(), so a changed setting applies from then on.
   */
  settingsFor?: (tenantId: string, handler: string) => BreakerSettings | undefined;
  /** Held entries before stale closed ones are swept (see the memory note above). */
  maxEntries?: number;
}

const CLOSED = 0;
const OPEN = 1;
const HALF_OPEN = 2;
type State = typeof CLOSED | typeof OPEN | typeof HALF_OPEN;
/** How long callers wait while a half-open probe is out, before they look again. */
export const HALF_OPEN_RECHECK_MS = 2_000;

const STATE_NAMES: readonly BreakerState[] = ["closed", "open", "half_open"];

/** One breaker. A class so every entry has one shape (check's property reads stay monomorphic). */
class Entry {
  state: State = CLOSED;
  failureCount = 0;
  /** When it last opened; meaningful while Open or HalfOpen. */
  openedAt = 0;
  /** When the current probe was let through; meaningful while HalfOpen. */
  probeAt = 0;
  lastFailureAt = 0;
}

function validSettings(settings: BreakerSettings): BreakerSettings {
  if (!Number.isInteger(settings.threshold) || settings.threshold < 1) throw new RangeError(`breaker threshold must be an integer >= 1, got ${settings.threshold}`);
  if (!(settings.cooldownMs > 0)) throw new RangeError(`breaker cooldown must be > 0 ms, got ${settings.cooldownMs}`);
  return settings;
}

export class CircuitBreakerRegistry {
  /** tenant -> handler -> entry. Nested so a lookup needs no composite key (no allocation). */
  private readonly tenants = new Map<string, Map<string, Entry>>();
  private readonly defaults: BreakerSettings;
  private readonly onTransition: ((transition: BreakerTransition) => void) | undefined;
  private readonly settingsFor: ((tenantId: string, handler: string) => BreakerSettings | undefined) | undefined;
  private readonly maxEntries: number;
  private entries = 0;
  private sweepAt: number;

  constructor(options: RegistryOptions) {
    this.defaults = validSettings(options.defaults);
    this.onTransition = options.onTransition;
    this.settingsFor = options.settingsFor;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.sweepAt = this.maxEntries;
  }

  /** Breakers held in memory (those with failures, Open or HalfOpen). */
  get size(): number {
    return this.entries;
  }

  /**
   * 0: proceed (closed); -1: proceed as the single half-open probe; > 0: ms until it may be tried
   * again. Allocates nothing on the closed path (and no Map lookups beyond the two nested ones).
   */
  check(tenantId: string, handler: string, now: number): number {
    const entry = this.tenants.get(tenantId)?.get(handler);
    // Untracked handlers never get an entry, so they always land here too.
    if (entry === undefined || entry.state === CLOSED) return 0;
    return this.checkTripped(entry, tenantId, handler, now);
  }

  private checkTripped(entry: Entry, tenantId: string, handler: string, now: number): number {
    const cooldown = this.settings(tenantId, handler).cooldownMs;
    // Capped at one cooldown: an opened_at ahead of this clock (another process's) must not
    // stretch the wait beyond it.
    if (entry.state === OPEN) {
      const remaining = Math.min(entry.openedAt + cooldown - now, cooldown);
      if (remaining > 0) return remaining;
      entry.state = HALF_OPEN;
      entry.probeAt = now;
      return -1;
    }
    // HalfOpen: a probe is out. Others look again shortly (the probe usually settles it within
    // seconds, and they should not sit out a whole cooldown after it succeeded); a probe that
    // never reports counts as abandoned after one cooldown, and a new one goes.
    const wait = Math.min(entry.probeAt + cooldown - now, cooldown);
    if (wait > 0) return Math.min(wait, HALF_OPEN_RECHECK_MS);
    entry.probeAt = now;
    return -1;
  }

  /** Any success resets the count and closes the breaker. Nothing to do when it is healthy. */
  recordSuccess(tenantId: string, handler: string, _now: number): void {
    const handlers = this.tenants.get(tenantId);
    const entry = handlers?.get(handler);
    if (handlers === undefined || entry === undefined) return;
    this.drop(tenantId, handlers, handler);
    if (entry.state !== CLOSED) this.onTransition?.({ kind: "closed", tenantId, handler });
  }

  /** Counts a failure; Open at the threshold. Nothing to do when it is already Open. */
  recordFailure(tenantId: string, handler: string, now: number): void {
    if (!isTracked(handler)) return;
    let entry = this.tenants.get(tenantId)?.get(handler);
    // Late failures of calls dispatched before it opened must not extend the cooldown.
    if (entry?.state === OPEN) return;
    entry ??= this.create(tenantId, handler, now);
    entry.failureCount++;
    entry.lastFailureAt = now;
    // The probe failed, or the count reached the threshold: (re)open with a fresh cooldown.
    if (entry.state === HALF_OPEN || entry.failureCount >= this.settings(tenantId, handler).threshold) {
      entry.state = OPEN;
      entry.openedAt = now;
      this.onTransition?.({ kind: "opened", tenantId, handler, failureCount: entry.failureCount, openedAt: now });
    }
  }

  /**
   * Make state match a persisted Open row (boot, or another process opened it). Does not emit a
   * transition. A breaker that already knows this opening (or a later one) is left as it is, so a
   * probe in flight here is not re-admitted.
   */
  restoreOpen(tenantId: string, handler: string, failureCount: number, openedAt: number): void {
    if (!isTracked(handler)) return;
    const entry = this.tenants.get(tenantId)?.get(handler) ?? this.create(tenantId, handler, openedAt);
    if (entry.state !== CLOSED && entry.openedAt >= openedAt) return;
    entry.state = OPEN;
    entry.failureCount = failureCount;
    entry.openedAt = openedAt;
    entry.lastFailureAt = Math.max(entry.lastFailureAt, openedAt);
  }

  /** Forget the breaker (a reset, from any process): closed, failure_count 0. Emits no transition. */
  reset(tenantId: string, handler: string): void {
    const handlers = this.tenants.get(tenantId);
    if (handlers?.has(handler)) this.drop(tenantId, handlers, handler);
  }

  /** Open breakers whose row should no longer exist are the caller's business; this lists state. */
  snapshot(tenantId?: string): BreakerSnapshot[] {
    const out: BreakerSnapshot[] = [];
    const add = (tenant: string, handlers: Map<string, Entry>) => {
      for (const [handler, entry] of handlers) {
        const settings = this.settings(tenant, handler);
        out.push({
          tenantId: tenant, handler, state: STATE_NAMES[entry.state]!, failureCount: entry.failureCount,
          failureThreshold: settings.threshold, cooldownSecs: settings.cooldownMs / 1000,
          openedAt: entry.state === CLOSED ? null : entry.openedAt,
        });
      }
    };
    if (tenantId === undefined) for (const [tenant, handlers] of this.tenants) add(tenant, handlers);
    else {
      const handlers = this.tenants.get(tenantId);
      if (handlers) add(tenantId, handlers);
    }
    return out;
  }

  /** Open or HalfOpen: not closed, so its Open row should exist (the probe has not succeeded yet). */
  isOpen(tenantId: string, handler: string): boolean {
    const entry = this.tenants.get(tenantId)?.get(handler);
    return entry !== undefined && entry.state !== CLOSED;
  }

  private settings(tenantId: string, handler: string): BreakerSettings {
    return this.settingsFor?.(tenantId, handler) ?? this.defaults;
  }

  private create(tenantId: string, handler: string, now: number): Entry {
    if (this.entries >= this.sweepAt) this.sweep(now);
    let handlers = this.tenants.get(tenantId);
    if (handlers === undefined) {
      handlers = new Map();
      this.tenants.set(tenantId, handlers);
    }
    const entry = new Entry();
    handlers.set(handler, entry);
    this.entries++;
    return entry;
  }

  private drop(tenantId: string, handlers: Map<string, Entry>, handler: string): void {
    handlers.delete(handler);
    this.entries--;
    if (handlers.size === 0) this.tenants.delete(tenantId);
  }

  /**
   * Drops closed entries whose last failure is older than their cooldown. The next sweep waits
   * until the held entries double, so a sweep that frees little is not repeated on every failure.
   */
  private sweep(now: number): void {
    for (const [tenantId, handlers] of this.tenants) {
      for (const [handler, entry] of handlers) {
        if (entry.state === CLOSED && now - entry.lastFailureAt >= this.settings(tenantId, handler).cooldownMs) {
          this.drop(tenantId, handlers, handler);
        }
      }
    }
    this.sweepAt = Math.max(this.maxEntries, this.entries * 2);
  }
}
