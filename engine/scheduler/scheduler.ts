// The scheduler of one storage backend: a tick loop that claims due instances, runs them within
// the global and per-tenant in-flight limits, renews the leases it holds, reaps expired ones, and
// on stop finishes or releases what it runs. Any number of schedulers (processes) may run
// against the same backend: correctness rests on the claim statement and the lease epochs.
import { CircuitBreakerRegistry } from "../breakers/registry.ts";
import type { EngineConfig } from "../config.ts";
import { BudgetedTenants } from "../exec/budgeted-tenants.ts";
import { StepSlots } from "../exec/step-slots.ts";
import { ProgressWriter } from "../exec/progress-writer.ts";
import { Interrupt } from "../exec/interrupt.ts";
import { StepRunner, type RunEnd } from "../exec/step-runner.ts";
import type { HandlerRegistry } from "../handlers/registry.ts";
import type { Logger } from "../logger.ts";
import { TenantMetrics, type MetricRow } from "../metrics/tenant-metrics.ts";
import type { Sequence } from "../sequence/schema.ts";
import { BackendStore, type Backend, type ClaimedInstance, type ClaimedWithRow, type StorageBackends } from "../storage/index.ts";
import { BreakerSync } from "./breaker-sync.ts";
import { REFRESH_EVERY_MS, refreshExpiringCredentials } from "../secrets/oauth-refresh.ts";
import { startCronTick } from "./cron-tick.ts";
import { DueListener } from "./due-listener.ts";
import type { TenantView } from "./tenant-view.ts";

export type SchedulerConfig = Pick<
  EngineConfig,
  | "BULKHEAD_TICK_MS" | "BULKHEAD_IDLE_CLAIM_MS" | "BULKHEAD_CLAIM_BATCH" | "BULKHEAD_MAX_INSTANCES_PER_TENANT" | "BULKHEAD_MAX_INSTANCES_IN_FLIGHT"
  | "BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT" | "BULKHEAD_MAX_CONCURRENT_STEPS" | "BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT" | "BULKHEAD_LEASE_MS" | "BULKHEAD_REAPER_MS" | "BULKHEAD_SHUTDOWN_GRACE_MS"
  | "BULKHEAD_BREAKER_THRESHOLD" | "BULKHEAD_BREAKER_COOLDOWN_SECS"
> & Partial<Pick<EngineConfig, "BULKHEAD_METRICS_RETENTION_DAYS">>;

export interface SchedulerDeps {
  backend: Backend;
  handlers: HandlerRegistry;
  config: SchedulerConfig;
  log: Logger;
  /** Names this process in lease_owner. */
  ownerId: string;
  /**
   * Which tenants are placed on this backend: the scheduler claims only for those not being moved,
   * and hands back the runs of a tenant placed elsewhere or quiesced. Absent: every tenant on the
   * backend is this scheduler's (tests and benchmarks that own their database).
   */
  tenants?: TenantView;
  /** Per-tenant metrics (claims, ends, deferrals, lag, backlog) into tenant_metrics; on unless false (benchmarks compare). */
  metrics?: boolean;
  /** This process's backends: the counts of a tenant moved away from this one follow it to its new backend. */
  backends?: Pick<StorageBackends, "has" | "get">;
  /** The process's step slots, shared by its schedulers; absent: this scheduler's own (from config). */
  slots?: StepSlots;
  now?: () => Date;
}

/** What one claim came back with. */
type Claimed = "full" | "some" | "none";

interface Running {
  claim: ClaimedInstance;
  /** Aborted when the lease is lost, or at the end of the shutdown grace. */
  interrupt: Interrupt;
  done: Promise<void>;
  /** Its last commit is queued: it no longer counts as in flight (see `held`). */
  committing: boolean;
}

/** Runs a tenant may hold, its last commits pending included, per run it may have in flight. */
const HELD_PER_IN_FLIGHT = 2;
/** The same for the whole process: more, so that no one tenant holding its most can fill it. */
const HELD_PER_IN_FLIGHT_ALL = 4;

/** Runs counted in all and per tenant. */
class SlotCount {
  total = 0;
  private readonly perTenant = new Map<string, number>();

  of(tenantId: string): number {
    return this.perTenant.get(tenantId) ?? 0;
  }

  add(tenantId: string, n: 1 | -1): void {
    this.total += n;
    const left = this.of(tenantId) + n;
    if (left > 0) this.perTenant.set(tenantId, left);
    else this.perTenant.delete(tenantId);
  }

  entries(): [string, number][] {
    return [...this.perTenant];
  }
}

export class Scheduler {
  /** Every run this scheduler holds a lease for: renewed, and waited for on stop. */
  private readonly running = new Map<string, Running>();
  /** Runs that count toward the in-flight limits: all but those only waiting for their last commit. */
  private readonly inFlightRuns = new SlotCount();
  /**
   * Every run held, its last commit pending included. A run whose last commit is queued no longer
   * counts as in flight, so claiming goes on while a slow WAL flush holds a commit batch (up to
   * 873 ms on the bench machine, every run slot waiting on it). A tenant is claimed for only while
   * it holds less than HELD_PER_IN_FLIGHT times its in-flight limit, and the process while it
   * holds less than HELD_PER_IN_FLIGHT_ALL times its own: so a finished run always has room to
   * wait for its commit outside its run slot, and one tenant's pending commits never fill the
   * room of the others.
   */
  private readonly held = new SlotCount();
  private readonly store: BackendStore;
  private readonly runner: StepRunner;
  private readonly now: () => Date;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private wakeLoop: (() => void) | null = null;
  /**
   * Something that may let the loop claim (a run's end freeing a slot, a due notice) happened
   * while it was not waiting: it claims again before it waits, so the wake-up is not lost.
   */
  private wakePending = false;
  /** The earliest due time after the last look (null: nothing scheduled), and when it was looked up. */
  private nextDue: { at: number | null; askedAt: number } = { at: null, askedAt: Number.NEGATIVE_INFINITY };
  /**
   * When the loop last looked for work it could claim (a tick's start). The next due time is asked
   * for after this moment, not after now: work that fell due between the claim and the question
   * (and sent no notice, as future-dated work does not) is then seen as due, not passed over until
   * the next future row or the idle interval.
   */
  private lookedAt = 0;
  private readonly dueListener: DueListener;
  private unwatchTenants: (() => void) | null = null;
  private timers: NodeJS.Timeout[] = [];
  private stopCronTick: (() => Promise<void>) | null = null;
  /** Tenants with a budget on this backend, refreshed with the reaper (so within its interval). */
  private readonly budgeted = new BudgetedTenants();
  /** The (tenant, handler) breakers of this backend's tenants, kept in step with other processes. */
  readonly breakers: CircuitBreakerRegistry;
  private readonly breakerSync: BreakerSync;
  /** When a run's tenant was first seen quiesced for a move, by instance id. */
  private readonly quiescedSince = new Map<string, number>();
  /** This backend's tenants' counts, written to its tenant_metrics every few seconds. */
  readonly metrics = new TenantMetrics();
  /** The sweep in flight, if any. */
  private reaping: Promise<void> | null = null;
  /** The OAuth2 credential refresh in flight, if any. */
  private refreshing: Promise<unknown> | null = null;
  private lastBacklogSample = 0;
  private lastMetricsPrune = 0;
  /** Totals since start, by how runs ended. */
  readonly ends = new Map<RunEnd | "error", number>();

  constructor(private readonly deps: SchedulerDeps) {
    this.now = deps.now ?? (() => new Date());
    this.store = new BackendStore(deps.backend);
    this.dueListener = new DueListener(connectionStringOf(deps.backend), () => {
      this.wake();
    }, deps.log);
    this.breakers = new CircuitBreakerRegistry({
      defaults: { threshold: deps.config.BULKHEAD_BREAKER_THRESHOLD, cooldownMs: deps.config.BULKHEAD_BREAKER_COOLDOWN_SECS * 1000 },
      onTransition: (transition) => this.breakerSync.onTransition(transition),
      settingsFor: (tenantId, handler) => this.breakerSync.settingsFor(tenantId, handler),
    });
    this.breakerSync = new BreakerSync(this.store, this.breakers, deps.log);
    this.runner = new StepRunner({
      store: this.store,
      handlers: deps.handlers,
      breakers: this.breakers,
      progress: new ProgressWriter(this.store, deps.metrics === false ? undefined : (progress) => this.metrics.written(progress)),
      budgeted: this.budgeted,
      slots: deps.slots ?? stepSlots(deps.config, deps.tenants),
      ...(deps.metrics === false ? {} : { metrics: this.metrics }),
      now: this.now,
      log: deps.log,
    });
  }

  /** Boots the breakers (Open rows come back with their cooldown), then starts claiming. */
  async start(): Promise<void> {
    const { config } = this.deps;
    await this.breakerSync.start();
    await this.dueListener.start();
    this.unwatchTenants = this.deps.tenants?.onChange(() => this.wake()) ?? null;
    this.startReap();
    this.loop = this.tickLoop();
    this.stopCronTick = startCronTick({ backend: this.deps.backend, tenants: this.deps.tenants, log: this.deps.log, now: this.now });
    this.timers.push(
      setInterval(() => void this.renew(), Math.max(250, Math.floor(config.BULKHEAD_LEASE_MS / 3))),
      setInterval(() => this.startReap(), config.BULKHEAD_REAPER_MS),
    );
    if (this.deps.metrics !== false) this.timers.push(setInterval(() => void this.flushMetrics(), METRICS_FLUSH_MS));
    const outbound = this.deps.handlers.outbound;
    if (outbound) {
      this.timers.push(setInterval(() => {
        this.refreshing ??= refreshExpiringCredentials(this.store, outbound, this.deps.log).catch((error: unknown) => {
          this.deps.log.warn({ err: error, backend_id: this.deps.backend.id }, "credential refresh sweep failed");
        }).finally(() => (this.refreshing = null));
      }, REFRESH_EVERY_MS));
    }
  }

  /** Stops claiming, lets in-flight runs finish within the grace, then releases the rest. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unwatchTenants?.();
    this.wake();
    await this.loop;
    const drained = Promise.all([...this.running.values()].map((r) => r.done));
    const grace = new Promise((resolve) => setTimeout(resolve, this.deps.config.BULKHEAD_SHUTDOWN_GRACE_MS).unref());
    if ((await Promise.race([drained.then(() => "drained"), grace])) !== "drained") {
      for (const run of this.running.values()) run.interrupt.abort("shutdown");
      await drained;
    }
    for (const timer of this.timers) clearInterval(timer);
    await this.stopCronTick?.();
    await this.dueListener.stop();
    await this.reaping; // its statements must not meet a closed pool
    await this.refreshing;
    await this.breakerSync.stop();
    await this.flushMetrics({ final: true });
  }

  /** Runs that count toward the in-flight limit (not those only waiting for their last commit). */
  get inFlight(): number {
    return this.inFlightRuns.total;
  }

  inFlightOf(tenantId: string): number {
    return this.inFlightRuns.of(tenantId);
  }

  private async tickLoop(): Promise<void> {
    const { log } = this.deps;
    while (!this.stopping) {
      let claimed: Claimed = "some";
      this.wakePending = false;
      try {
        claimed = await this.tick();
      } catch (error) {
        log.error({ err: error, backend_id: this.deps.backend.id }, "tick failed");
      }
      if (this.wakePending || this.stopping) continue;
      // A full batch means more is due: go again at once, as after a wake-up while it claimed. A
      // part of a batch: wait a tick (a tenant's cap may have held the rest back), or less when
      // woken or when future-dated work falls due. Nothing: wait until something may be due.
      if (claimed === "some") await this.waitForWork(await this.untilNextDue());
      else if (claimed === "none") await this.idle();
    }
  }

  /**
   * After a claim that found nothing: waits for a wake-up (a due notice, a run's end, a listener
   * reconnected, a placement or limit change), the next known due time, or BULKHEAD_IDLE_CLAIM_MS
   * at the latest (notices are hints). It does not claim every tick: with thousands of tenants
   * that hold only future-dated work, each empty claim visits every one of them. The next due
   * time is looked up once a tick, as new future-dated work sends no notice.
   */
  private async idle(): Promise<void> {
    const until = Date.now() + this.deps.config.BULKHEAD_IDLE_CLAIM_MS;
    for (;;) {
      const waitMs = await this.untilNextDue();
      if (this.wakePending || this.stopping) return;
      await this.waitForWork(Math.max(0, Math.min(waitMs, until - Date.now())));
      if (this.wakePending || this.stopping || Date.now() >= until) return;
      if (this.nextDue.at !== null && this.nextDue.at <= this.now().getTime()) return;
      // Runs of a quiesced tenant wait out their grace: the tick that hands them back is due.
      if (this.quiescedSince.size > 0) return;
    }
  }

  /** Waits `ms`, or less when woken. */
  private async waitForWork(ms: number): Promise<void> {
    if (this.wakePending || this.stopping) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeLoop = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeLoop = null;
  }

  private wake(): void {
    this.wakePending = true;
    this.wakeLoop?.();
  }

  /**
   * How long an idle loop may wait: a tick, or less when future-dated work falls due sooner (or
   * fell due since the last look: then at once). Due notices cover work due now; work due later is
   * found by asking, at most once a tick (new future work may be earlier than what was last seen),
   * or again once that moment passed.
   */
  private async untilNextDue(): Promise<number> {
    const tick = this.deps.config.BULKHEAD_TICK_MS;
    const now = this.now().getTime();
    if (now - this.nextDue.askedAt >= tick || (this.nextDue.at !== null && this.nextDue.at <= now)) {
      try {
        this.nextDue = { at: (await this.store.nextDueAfter(new Date(Math.min(now, this.lookedAt))))?.getTime() ?? null, askedAt: now };
      } catch (error) {
        this.deps.log.warn({ err: error, backend_id: this.deps.backend.id }, "next due time unknown, waiting a tick");
        return tick;
      }
    }
    const at = this.nextDue.at;
    return at === null ? tick : Math.max(1, Math.min(tick, at - this.now().getTime()));
  }

  /** One claim and the start of its runs: whether the batch came back full, with some, or empty. */
  private async tick(): Promise<Claimed> {
    const { config, backend } = this.deps;
    this.lookedAt = this.now().getTime();
    this.yieldMovedRuns();
    const max = config.BULKHEAD_MAX_INSTANCES_IN_FLIGHT;
    const free = Math.min(max - this.inFlightRuns.total, max * HELD_PER_IN_FLIGHT_ALL - this.held.total);
    if (free <= 0) return "none"; // a run's end wakes the loop
    const onlyTenants = this.deps.tenants?.claimable(backend.id);
    if (onlyTenants?.length === 0) return "none"; // a placement change wakes it
    const limit = Math.min(config.BULKHEAD_CLAIM_BATCH, free);
    const held = this.held.entries();
    const room = held.map(([tenant]): [string, number] => [tenant, this.roomOf(tenant)]);
    const saturated = room.filter(([, n]) => n === 0).map(([tenant]) => tenant);
    const now = this.now();
    const claimed = await this.store.claim({
      now, limit, maxPerTenant: config.BULKHEAD_MAX_INSTANCES_PER_TENANT,
      leaseOwner: this.deps.ownerId, leaseMs: config.BULKHEAD_LEASE_MS, excludeTenants: saturated, onlyTenants,
      capOverrides: this.deps.tenants?.claimCaps(), inFlight: held, room, knownSequences: this.runner.knownSequences(),
    });
    if (claimed.length === 0) return "none";
    const sequences = this.runner.sequencesOf(claimed.map((claim) => claim.row));
    if (this.deps.metrics !== false) {
      const at = now.getTime();
      for (const claim of claimed) this.metrics.claimed(claim.tenantId, at - claim.dueAt.getTime(), at);
    }

    const extra: ClaimedInstance[] = [];
    claimed.forEach((claim, i) => {
      if (this.roomOf(claim.tenantId) > 0) this.startRun(claim, sequences[i]!);
      else extra.push(claim);
    });
    // More of a tenant came back than it may start (the claim without a cap does not know): the
    // rest go back, due now.
    await this.store.releaseLeases(extra, now, "cap");
    if (this.deps.metrics !== false) for (const claim of extra) this.metrics.deferred(claim.tenantId, "cap");
    return claimed.length === limit ? "full" : "some";
  }

  /** How many more runs the tenant may start: within its in-flight limit, and within its limit of runs held. */
  private roomOf(tenantId: string): number {
    const limit = this.concurrencyOf(tenantId);
    return Math.max(0, Math.min(limit - this.inFlightRuns.of(tenantId), limit * HELD_PER_IN_FLIGHT - this.held.of(tenantId)));
  }

  /** How many of the tenant's instances may be in flight here: its own limit, else the default. */
  private concurrencyOf(tenantId: string): number {
    return this.deps.tenants?.limitsOf(tenantId)?.maxConcurrency ?? this.deps.config.BULKHEAD_MAX_INSTANCES_IN_FLIGHT_PER_TENANT;
  }

  /**
   * A tenant placed on another backend now: its runs stop at once and hand their instances back
   * (the rows here are no longer its own). A tenant quiesced for a move: its runs get the shutdown
   * grace to finish their steps, then hand back, so the mover's drain ends.
   */
  private yieldMovedRuns(): void {
    const { tenants, backend, config } = this.deps;
    if (!tenants) return;
    const now = Date.now();
    for (const [id, run] of this.running) {
      if (run.committing) continue;
      const tenantId = run.claim.tenantId;
      if (!tenants.isPlacedOn(tenantId, backend.id)) {
        run.interrupt.abort("shutdown");
      } else if (tenants.isQuiesced(tenantId)) {
        const since = this.quiescedSince.get(id) ?? now;
        this.quiescedSince.set(id, since);
        if (now - since >= config.BULKHEAD_SHUTDOWN_GRACE_MS) run.interrupt.abort("shutdown");
      }
    }
  }

  private startRun(claim: ClaimedWithRow, sequence: Sequence | null): void {
    const interrupt = new Interrupt();
    const run: Running = { claim, interrupt, done: Promise.resolve(), committing: false };
    this.inFlightRuns.add(claim.tenantId, 1);
    this.held.add(claim.tenantId, 1);
    run.done = this.runner.run(claim, claim.row, sequence, interrupt, () => this.handOff(run))
      .then(
        (end) => this.count(end),
        (error: unknown) => {
          this.count("error");
          this.deps.log.error({ err: error, tenant_id: claim.tenantId, instance_id: claim.id }, "run failed");
        },
      )
      .finally(() => {
        this.running.delete(claim.id);
        this.quiescedSince.delete(claim.id);
        if (!run.committing) this.inFlightRuns.add(claim.tenantId, -1);
        this.held.add(claim.tenantId, -1);
        this.wake();
      });
    this.running.set(claim.id, run);
  }

  /**
   * A run's last commit is queued: it leaves its run slot, and the loop may claim in its place
   * (the claim kept room for it among the runs held). Its lease is still renewed, and stop()
   * still waits for it.
   */
  private handOff(run: Running): void {
    run.committing = true;
    this.inFlightRuns.add(run.claim.tenantId, -1);
    this.quiescedSince.delete(run.claim.id);
    this.wake();
  }

  /**
   * Writes what was counted, each tenant's rows to the backend it is placed on. A tenant being
   * moved keeps its counts here until it is resumed, so none lands on the old backend after its
   * rows were copied (or deleted). On failure the counts are kept for the next try.
   */
  async flushMetrics(options: { final?: boolean } = {}): Promise<void> {
    const byBackend = new Map<string, { backend: Backend; rows: MetricRow[] }>();
    const held: MetricRow[] = [];
    for (const row of this.metrics.drain()) {
      const home = this.metricsHome(row.tenantId, options.final === true);
      if (home === "hold") held.push(row);
      else if (home) {
        const group = byBackend.get(home.id) ?? { backend: home, rows: [] };
        byBackend.set(home.id, group);
        group.rows.push(row);
      }
    }
    this.metrics.restore(held);
    await Promise.all([...byBackend.values()].map(async ({ backend, rows }) => {
      try {
        await this.storeOf(backend).writeTenantMetrics(rows);
      } catch (error) {
        this.metrics.restore(rows);
        this.deps.log.warn({ err: error, backend_id: backend.id }, "could not write tenant metrics");
      }
    }));
  }

  /**
   * The backend a tenant's counts are written to; "hold" while it is quiesced for a move (unless
   * this is the last flush before the process stops); null when no backend of this process
   * serves it, and they are dropped.
   */
  private metricsHome(tenantId: string, final: boolean): Backend | "hold" | null {
    const view = this.deps.tenants;
    if (!view) return this.deps.backend;
    const placement = view.placementOf(tenantId);
    if (!placement) return null;
    if (placement.quiescedAt !== null && !final) return "hold";
    if (placement.backendId === this.deps.backend.id) return this.deps.backend;
    return this.deps.backends?.has(placement.backendId) ? this.deps.backends.get(placement.backendId) : null;
  }

  private storeOf(backend: Backend): BackendStore {
    return backend.id === this.store.id ? this.store : new BackendStore(backend);
  }

  private count(end: RunEnd | "error"): void {
    this.ends.set(end, (this.ends.get(end) ?? 0) + 1);
  }

  private async renew(): Promise<void> {
    const held = [...this.running.values()];
    if (held.length === 0) return;
    try {
      const until = new Date(this.now().getTime() + this.deps.config.BULKHEAD_LEASE_MS);
      const kept = await this.store.renewLeases(held.map((r) => r.claim), until);
      for (const run of held) if (!kept.has(run.claim.id) && this.running.has(run.claim.id)) run.interrupt.abort("lease_lost");
    } catch (error) {
      this.deps.log.warn({ err: error, backend_id: this.deps.backend.id }, "lease renewal failed");
    }
  }

  /** Every 15 s: how many due instances each tenant has waiting (the backlog). */
  private async sampleBacklog(onlyTenants: string[] | null): Promise<void> {
    const now = this.now();
    if (this.deps.metrics === false || now.getTime() - this.lastBacklogSample < BACKLOG_SAMPLE_MS) return;
    this.lastBacklogSample = now.getTime();
    const backlog = await this.store.dueBacklog(now, onlyTenants);
    // A tenant active this minute with nothing waiting is sampled as 0, so its last sample says
    // the queue drained (idle tenants get no row at all: tenant_metrics stays small).
    for (const tenantId of this.metrics.tenantsInMinute(now.getTime())) if (!backlog.has(tenantId)) backlog.set(tenantId, 0);
    for (const [tenantId, due] of backlog) this.metrics.backlog(tenantId, due, now.getTime());
  }

  /** Hourly: minutes older than the retention (BULKHEAD_METRICS_RETENTION_DAYS, 14) go, and event counts of past minutes. */
  private async pruneMetrics(): Promise<void> {
    const now = this.now().getTime();
    if (this.deps.metrics === false || now - this.lastMetricsPrune < METRICS_PRUNE_MS) return;
    this.lastMetricsPrune = now;
    const days = this.deps.config.BULKHEAD_METRICS_RETENTION_DAYS ?? 14;
    await this.store.pruneTenantMetrics(new Date(now - days * 86_400_000));
    await this.store.pruneEventMinutes(new Date(now - METRICS_PRUNE_MS));
  }

  /** One sweep at a time: a slow one is not joined by the next interval's. */
  private startReap(): void {
    this.reaping ??= this.reap().finally(() => (this.reaping = null));
  }

  private async reap(): Promise<void> {
    try {
      await this.budgeted.refresh(this.store);
      // Sweeps that change instances: only for the tenants this scheduler may claim for.
      const onlyTenants = this.deps.tenants?.claimable(this.deps.backend.id) ?? null;
      await this.store.reapWorkerTasks(this.now(), { onlyTenants });
      await this.store.wakeDueWaiting(this.now(), 500, onlyTenants);
      const reaped = await this.store.reapExpiredLeases(this.now(), 500);
      await this.sampleBacklog(onlyTenants);
      await this.pruneMetrics();
      // The overview's instance counts are deltas until merged (engine/storage/instance-counts.ts).
      await this.store.mergeInstanceCounts();
      // And the console's per-tenant hour moves on once a minute (engine/storage/tenant-activity.ts).
      await this.store.advanceTenantActivity(this.now());
      if (reaped > 0) this.deps.log.info({ backend_id: this.deps.backend.id, reaped }, "returned instances with expired leases");
    } catch (error) {
      this.deps.log.warn({ err: error, backend_id: this.deps.backend.id }, "reaper failed");
    }
  }
}

const METRICS_FLUSH_MS = 5_000;
const BACKLOG_SAMPLE_MS = 15_000;
const METRICS_PRUNE_MS = 3_600_000;

/** Step slots for one process: the configured limits, and each tenant's own step limit when an operator set one. */
export function stepSlots(
  config: Pick<EngineConfig, "BULKHEAD_MAX_CONCURRENT_STEPS" | "BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT">,
  tenants?: Pick<TenantView, "limitsOf">,
): StepSlots {
  const perTenant = config.BULKHEAD_MAX_CONCURRENT_STEPS_PER_TENANT;
  return new StepSlots(config.BULKHEAD_MAX_CONCURRENT_STEPS, (tenantId) => tenants?.limitsOf(tenantId)?.maxSteps ?? perTenant);
}

/** The connection string the backend's pool was made with (the listener opens its own session). */
function connectionStringOf(backend: Backend): string {
  return (backend.pool as unknown as { options: { connectionString: string } }).options.connectionString;
}
