// The resource ledger: every resource tenants share, with its boundary, its default, what sets
// it, the one place that enforces it, and the noisy-neighbour test that proves it. The README's
// table and the operator console's Resources page are made from this list, so they cannot drift
// from it; test/ledger.test.ts checks the README and that every named file exists. A boundary
// nobody decided is a global one, so "enforced: false" rows say plainly what is missing.
// Browser-safe: plain data.

export type Boundary = "per tenant" | "tiered" | "global";

export interface LedgerEntry {
  id: string;
  resource: string;
  boundary: Boundary;
  /** The default, in words. */
  default: string;
  /** The engine-wide setting (an environment variable), if any. */
  setting: string | null;
  /** How an operator sets one tenant's own value (tiered), if it can. */
  override: string | null;
  /** The one code point that enforces it (a repository path). */
  enforcedAt: string;
  /** The noisy-neighbour test (a repository path), when there is one. */
  test: string | null;
  /** False while the boundary is decided but not enforced yet. */
  enforced: boolean;
}

export const LEDGER: readonly LedgerEntry[] = [
  {
    id: "claim_batch", resource: "claim batch", boundary: "tiered", default: "no cap (0)",
    setting: "BULKHEAD_MAX_INSTANCES_PER_TENANT", override: "tenant page: claim cap",
    enforcedAt: "engine/storage/claim.ts", test: "engine/storage/claim.int.test.ts", enforced: true,
  },
  {
    id: "instances_in_flight", resource: "instances in flight (running their steps), per engine process", boundary: "tiered",
    default: "128 in all, 32 per tenant; twice that held per tenant (four times in all), counting runs whose last write is pending",
    setting: "BULKHEAD_MAX_INSTANCES_IN_FLIGHT(_PER_TENANT)", override: "tenant page: in-flight limit",
    enforcedAt: "engine/scheduler/scheduler.ts", test: "engine/scheduler/scheduler.int.test.ts", enforced: true,
  },
  {
    id: "step_slots", resource: "step slots (handler calls and worker dispatches, fan-out included), per engine process", boundary: "tiered",
    default: "128 in all, 32 per tenant; sleep holds none", setting: "BULKHEAD_MAX_CONCURRENT_STEPS(_PER_TENANT)", override: "tenant page: step limit",
    enforcedAt: "engine/exec/step-slots.ts", test: "engine/exec/step-slots.int.test.ts", enforced: true,
  },
  {
    id: "outbound_per_host", resource: "outbound requests per (tenant, host), per process", boundary: "tiered", default: "16 open at once; over it a step waits",
    setting: "BULKHEAD_OUTBOUND_PER_HOST", override: "tenant page: outbound per host", enforcedAt: "engine/handlers/host-slots.ts",
    test: "engine/handlers/outbound-slots.test.ts", enforced: true,
  },
  {
    id: "handler_failures", resource: "handler failures (a failing vendor)", boundary: "per tenant", default: "opens after 5 failures, 60 s cooldown",
    setting: "BULKHEAD_BREAKER_THRESHOLD, BULKHEAD_BREAKER_COOLDOWN_SECS", override: "tenant admins, within operator bounds",
    enforcedAt: "engine/breakers/preflight.ts", test: "engine/scheduler/breakers.int.test.ts", enforced: true,
  },
  {
    id: "rate_limits_budgets", resource: "rate limits and budgets", boundary: "per tenant", default: "none",
    setting: null, override: "CLI and tenant page: budget, rate limits", enforcedAt: "engine/exec/preflight.ts",
    test: "engine/exec/preflight.int.test.ts", enforced: true,
  },
  {
    id: "worker_queue", resource: "external worker queue", boundary: "per tenant",
    default: "tenant key: own tenant; operator fleet poll: round robin across tenants, 64 claimed per tenant and handler",
    setting: null, override: null, enforcedAt: "engine/storage/worker-tasks.ts", test: "engine/storage/worker-tasks-fleet.int.test.ts", enforced: true,
  },
  {
    id: "request_bodies", resource: "request bodies", boundary: "global", default: "1 MiB tRPC, 10 MiB REST",
    setting: null, override: null, enforcedAt: "server/api/handler.ts", test: "server/api/handler.int.test.ts", enforced: true,
  },
  {
    id: "value_sizes", resource: "context, signal payloads, worker outputs and checkpoints", boundary: "global", default: "256 KiB each",
    setting: null, override: null, enforcedAt: "engine/size-limits.ts", test: "server/api/instances.int.test.ts", enforced: true,
  },
  {
    id: "other_instances", resource: "other instances (signals, queries, events)", boundary: "per tenant",
    default: "the caller's tenant only; a foreign id reads as missing", setting: null, override: null,
    enforcedAt: "engine/storage/run-store.ts", test: "engine/handlers/tenant-instances.int.test.ts", enforced: true,
  },
  {
    id: "storage", resource: "storage backend", boundary: "per tenant", default: "the default backend, epoch 1",
    setting: "BULKHEAD_DEFAULT_BACKEND", override: "placement and moves", enforcedAt: "engine/storage/router.ts",
    test: "engine/storage/router.int.test.ts", enforced: true,
  },
  {
    id: "outbound_targets", resource: "outbound targets", boundary: "global", default: "no private, loopback or link-local address",
    setting: "BULKHEAD_HTTP_ALLOW", override: null, enforcedAt: "engine/handlers/outbound-guard.ts",
    test: "engine/handlers/outbound-guard.test.ts", enforced: true,
  },
  {
    id: "evaluation_cpu", resource: "expression, template and schema CPU", boundary: "global", default: "a work budget per evaluation",
    setting: null, override: null, enforcedAt: "engine/sequence/expression/limits.ts", test: "engine/sequence/expression.test.ts", enforced: true,
  },
  {
    id: "metrics_labels", resource: "metrics label budget", boundary: "global", default: "top 20 tenants labelled, the rest as other",
    setting: "BULKHEAD_METRICS_TOP_TENANTS", override: null, enforcedAt: "server/ops/prometheus.ts",
    test: "server/ops/prometheus.int.test.ts", enforced: true,
  },
  {
    id: "db_connections", resource: "database connections of a backend pool, per process", boundary: "per tenant",
    default: "half the pool per tenant (at least one); every statement ends after 30 s",
    setting: "BULKHEAD_POOL_TENANT_SHARE_PERCENT, BULKHEAD_STATEMENT_TIMEOUT_MS", override: null,
    enforcedAt: "engine/storage/connection-shares.ts", test: "engine/storage/connection-shares.int.test.ts", enforced: true,
  },
  {
    id: "api_requests", resource: "API requests", boundary: "tiered", default: "50 requests/s, burst 200, per key or user and tenant",
    setting: "BULKHEAD_API_RATE_PER_SEC, BULKHEAD_API_BURST", override: "tenant page: API rate", enforcedAt: "server/request-rate.ts",
    test: "server/request-rate.int.test.ts", enforced: true,
  },
  {
    id: "public_webhooks", resource: "public webhook requests, per web process", boundary: "tiered",
    default: "100 requests/s per tenant, burst 200, and 300/s per (client address, slug); over either a webhook gets 429",
    setting: "BULKHEAD_WEBHOOK_RATE_PER_SEC", override: "tenant page: webhooks per second", enforcedAt: "server/webhooks.ts",
    test: "server/rest/triggers.int.test.ts", enforced: true,
  },
  {
    id: "instance_logs", resource: "instance log lines (log steps, workers' logs)", boundary: "global",
    default: "1,000 lines per instance, 4,096 characters each; later lines are dropped", setting: null, override: null,
    enforcedAt: "engine/storage/instance-logs.ts", test: "server/rest/instance-logs.int.test.ts", enforced: true,
  },
  {
    id: "retention_pruning", resource: "retention pruning (deleting finished instances past their retention), per backend", boundary: "tiered",
    default: "30 days kept; each pass deletes one batch of 500 instances per tenant with expired ones, starting from another tenant each pass, locking only terminal rows and skipping locked ones",
    setting: "BULKHEAD_RETENTION_DAYS, BULKHEAD_RETENTION_BATCH", override: "tenant page: retention", enforcedAt: "engine/retention/pruner.ts",
    test: "engine/retention/pruner.int.test.ts", enforced: true,
  },
  {
    id: "event_fan_out", resource: "event fan-out (emit_event children)", boundary: "per tenant",
    default: "1,000 children per instance (then the step fails); 6,000 per tenant per clock minute (then the step waits for the next)",
    setting: "BULKHEAD_EVENTS_PER_PARENT, BULKHEAD_EVENTS_PER_TENANT_PER_MINUTE", override: null,
    enforcedAt: "engine/storage/events.ts", test: "engine/handlers/event-fan-out.int.test.ts", enforced: true,
  },
  {
    id: "live_streams", resource: "live streams (instance and change streams, each polls the database while open), per web process", boundary: "per tenant",
    default: "256 in all, 64 per tenant; over it a new instance stream is 503, a change stream 429", setting: "BULKHEAD_STREAMS(_PER_TENANT)", override: null,
    enforcedAt: "server/live/stream-slots.ts", test: "server/rest/changes.int.test.ts", enforced: true,
  },
  {
    id: "cron_schedules", resource: "cron schedules", boundary: "tiered", default: "1,000 per tenant; one more is refused (409)",
    setting: "BULKHEAD_CRON_SCHEDULES_PER_TENANT", override: "tenant page: cron schedules",
    enforcedAt: "engine/storage/cron-schedules.ts", test: "server/rest/cron.int.test.ts", enforced: true,
  },
  {
    id: "cron_fires", resource: "cron fires (the 1 s cron tick), per engine process", boundary: "per tenant",
    default: "each due tenant's first schedule before anyone's second, at most 25 of a tenant per claim and 100 fires per tenant per tick",
    setting: null, override: null, enforcedAt: "engine/scheduler/cron-tick.ts", test: "engine/scheduler/cron-tick.int.test.ts", enforced: true,
  },
];

/** The README's table of the ledger. */
export function ledgerMarkdown(entries: readonly LedgerEntry[] = LEDGER): string {
  const cell = (text: string | null) => (text ? text.replaceAll("|", "\\|") : "—");
  const code = (text: string | null) => (text ? `\`${text}\`` : "—");
  const lines = [
    "| resource | boundary | default | setting | per-tenant value | enforced at | test |",
    "|---|---|---|---|---|---|---|",
    ...entries.map((e) =>
      `| ${cell(e.resource)} | ${e.boundary} | ${cell(e.default)} | ${code(e.setting)} | ${cell(e.override)} | ${e.enforced ? code(e.enforcedAt) : `not yet (${code(e.enforcedAt)})`} | ${code(e.test)} |`),
  ];
  return lines.join("\n");
}
