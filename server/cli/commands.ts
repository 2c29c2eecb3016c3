// `npm run bulkhead -- <command>`: provisioning and scripting. Each command prints what it did;
// a secret, when there is one, is the last line of standard output so scripts can `tail -n1`.
import path from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { AppError, isAppError } from "../../engine/errors.ts";
import type { EngineConfig } from "../../engine/config.ts";
import { runDeletion, startDeletion } from "../../engine/lifecycle/delete-tenant.ts";
import { runMove, startMove } from "../../engine/moves/move-tenant.ts";
import {
  DELETION_PHASES, MOVE_PHASES, type DeletionPhase, type DeletionRecord, type MovePhase, type MoveRecord, type Storage,
} from "../../engine/storage/index.ts";
import { signOutEverywhereByEmail } from "../auth/account.ts";
import { createApiKey } from "../control/api-keys.ts";
import { recordAudit } from "../control/audit.ts";
import { applyBudget, applyRateLimit } from "../limits.ts";
import { createTenant, listTenants } from "../control/tenants.ts";
import type { ExportProgress } from "../lifecycle/export.ts";
import { exportTenant, progressLine, throttled } from "../lifecycle/export-tenant.ts";
import { addMember, createUser, type Role } from "../control/users.ts";
import type { Prisma } from "../db/prisma.ts";

export interface CliDeps {
  prisma: Prisma;
  storage: Storage;
  config: EngineConfig;
  print: (line: string) => void;
  /** A long command's progress line, rewritten as it goes (standard error); none when absent. */
  progress?: (line: string) => void;
}

export const USAGE = `usage: npm run bulkhead -- <command>

  tenants create <slug> [--name N]
  tenants list
  users create <email> --password P [--name N] [--operator]
  users signout <email>                                    (ends every session of the user)
  members add <tenant> <email> --role admin|member
  api-keys create <tenant> [--name N]
  api-keys create --operator [--name N]
  limits rate <tenant> <key> <max_count> <window_ms>     (max_count 0 removes)
  limits budget <tenant> <steps_per_period> <period_secs> (steps_per_period 0 removes)
  limits show <tenant>
  limits retention <tenant> <days|default>                (how long its finished instances are kept; 30 days by default)
  placements list
  placements advance <tenant> <backend> <epoch>           (epoch must be greater than the current one)
  tenants move <tenant> <backend>                          (prints each phase; run again to resume)
  tenants export <tenant> <dir>                            (NDJSON files and manifest.json; dir new or empty)
  tenants delete <tenant> --confirm <tenant>               (every row on every backend; prints each phase; run again to resume)`;

type Command = (args: string[], deps: CliDeps) => Promise<void>;

function parse(args: string[], options: ParseArgsConfig["options"], positionals: string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new AppError("invalid_argument", (error as Error).message);
  }
  if (parsed.positionals.length !== positionals.length) {
    throw new AppError("invalid_argument", `expected ${positionals.map((p) => `<${p}>`).join(" ") || "no arguments"}`);
  }
  return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
}

/** A non-negative integer argument. */
function count(text: string, name: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw new AppError("invalid_argument", `${name} must be a non-negative integer, got "${text.slice(0, 32)}"`);
  }
  return value;
}

const commands: Record<string, Command> = {
  async "tenants create"(args, { prisma, config, print }) {
    const { values, positionals } = parse(args, { name: { type: "string" } }, ["slug"]);
    const tenant = await createTenant(prisma, {
      slug: positionals[0]!,
      name: values.name as string | undefined,
      backendId: config.BULKHEAD_DEFAULT_BACKEND,
    });
    await recordAudit(prisma, { actor: "cli", tenantId: tenant.id, action: "tenant.create", details: { name: tenant.name } });
    print(`created tenant ${tenant.id} (${tenant.name}) on backend ${config.BULKHEAD_DEFAULT_BACKEND}, epoch 1`);
  },

  async "tenants list"(args, { prisma, print }) {
    parse(args, {}, []);
    for (const t of await listTenants(prisma)) {
      print(`${t.id}\t${t.name}\t${t.backendId ?? "-"}@${t.epoch ?? "-"}\t${t.memberCount} members`);
    }
  },

  async "users create"(args, { prisma, print }) {
    const { values, positionals } = parse(
      args,
      { password: { type: "string" }, name: { type: "string" }, operator: { type: "boolean" } },
      ["email"],
    );
    if (typeof values.password !== "string") throw new AppError("invalid_argument", "--password is required");
    const user = await createUser(prisma, {
      email: positionals[0]!,
      password: values.password,
      name: values.name as string | undefined,
      isOperator: values.operator === true,
    });
    await recordAudit(prisma, { actor: "cli", action: "user.create", details: { email: user.email, operator: values.operator === true } });
    print(`created ${values.operator ? "operator" : "user"} ${user.email}`);
  },

  async "users signout"(args, { prisma, print }) {
    const { positionals } = parse(args, {}, ["email"]);
    const { email, ended } = await signOutEverywhereByEmail(prisma, positionals[0]!, { actor: "cli" });
    print(`signed ${email} out everywhere: ${ended} session${ended === 1 ? "" : "s"} ended`);
  },

  async "members add"(args, { prisma, print }) {
    const { values, positionals } = parse(args, { role: { type: "string" } }, ["tenant", "email"]);
    if (typeof values.role !== "string") throw new AppError("invalid_argument", "--role admin|member is required");
    const [tenantId, email] = positionals as [string, string];
    await addMember(prisma, { tenantId, email, role: values.role as Role });
    await recordAudit(prisma, { actor: "cli", tenantId, action: "member.add", details: { email, role: values.role } });
    print(`${email} is now ${values.role} of ${tenantId}`);
  },

  async "api-keys create"(args, { prisma, print }) {
    const operator = args.includes("--operator");
    const { values, positionals } = parse(args, { name: { type: "string" }, operator: { type: "boolean" } }, operator ? [] : ["tenant"]);
    const tenantId = operator ? null : positionals[0]!;
    const key = await createApiKey(prisma, { tenantId, name: values.name as string | undefined });
    await recordAudit(prisma, { actor: "cli", tenantId, action: "api_key.create", details: { prefix: key.prefix, operator } });
    print(`created ${operator ? "operator" : `tenant ${tenantId}`} API key ${key.prefix}… (the secret is shown once, below)`);
    print(key.secret);
  },

  // Limits live on the tenant's backend, reached through the router (unknown tenant: not found).
  async "limits rate"(args, { prisma, storage, print }) {
    const { positionals } = parse(args, {}, ["tenant", "key", "max_count", "window_ms"]);
    const [tenantId, key, maxText, windowText] = positionals as [string, string, string, string];
    const maxCount = count(maxText, "max_count");
    const windowMs = count(windowText, "window_ms");
    const change = await applyRateLimit(prisma, await storage.tenantForWrite(tenantId), { actor: "cli" }, { key, maxCount, windowMs });
    if (change === "absent") return print(`${tenantId} has no rate limit for key "${key}"`);
    if (change === "removed") return print(`removed the rate limit of ${tenantId} for key "${key}"`);
    print(`rate limit of ${tenantId} for key "${key}": ${maxCount} per ${windowMs} ms`);
  },

  async "limits budget"(args, { prisma, storage, print }) {
    const { positionals } = parse(args, {}, ["tenant", "steps_per_period", "period_secs"]);
    const [tenantId, stepsText, periodText] = positionals as [string, string, string];
    const steps = count(stepsText, "steps_per_period");
    const periodSecs = count(periodText, "period_secs");
    const change = await applyBudget(prisma, await storage.tenantForWrite(tenantId), { actor: "cli" }, { stepsPerPeriod: steps, periodSecs });
    if (change === "absent") return print(`${tenantId} has no budget`);
    if (change === "removed") return print(`removed the budget of ${tenantId}: unlimited`);
    print(`budget of ${tenantId}: ${steps} steps per ${periodSecs} s`);
  },

  async "placements list"(args, { storage, print }) {
    parse(args, {}, []);
    print(`backends registered here: ${storage.backends.ids().join(", ")}`);
    for (const p of await storage.listPlacements()) {
      print(`${p.tenantId}\t${p.backendId}\tepoch ${p.epoch}${p.quiescedAt ? "\tquiesced (moving)" : ""}`);
    }
  },

  async "placements advance"(args, { prisma, storage, print }) {
    const { positionals } = parse(args, {}, ["tenant", "backend", "epoch"]);
    const [tenantId, backendId, epochText] = positionals as [string, string, string];
    const placement = await storage.advanceTenantPlacement(tenantId, backendId, count(epochText, "epoch"));
    await recordAudit(prisma, { actor: "cli", tenantId, action: "placement.advance", details: { backend_id: backendId, epoch: placement.epoch } });
    print(`${tenantId} is placed on ${placement.backendId} at epoch ${placement.epoch}`);
  },

  async "tenants move"(args, { prisma, storage, print }) {
    const { positionals } = parse(args, {}, ["tenant", "backend"]);
    const [tenantId, backendId] = positionals as [string, string];
    const started = await startMove(storage, tenantId, backendId, "cli");
    if (started.kind === "already_placed") return print(`${tenantId} is already on ${backendId} (epoch ${started.epoch}); nothing to move`);
    if (started.kind === "started") {
      await recordAudit(prisma, { actor: "cli", tenantId, action: "tenant.move.start", details: { from: started.move.fromBackend, to: backendId, move_id: started.move.id } });
      print(`moving ${tenantId} from ${started.move.fromBackend} to ${backendId} (move ${started.move.id})`);
    } else {
      print(`resuming the move of ${tenantId} to ${backendId} at phase ${started.move.phase} (move ${started.move.id})`);
    }
    const steps = MOVE_PHASES.length - 1;
    const line = (phase: MovePhase) => print(`  ${MOVE_PHASES.indexOf(phase) + 1}/${steps} ${phase}`);
    let done: MoveRecord;
    try {
      done = await runMove(storage, started.move, { requestedBy: "cli", beforePhase: (_move, phase) => line(phase) });
    } catch (error) {
      // An engine took the move first (engines run unfinished moves): follow its phases instead.
      if (!(isAppError(error, "conflict") && error.message === "another process is running this move")) throw error;
      print("  an engine is running this move; following it");
      done = await followMove(storage, started.move, line);
    }
    await recordAudit(prisma, { actor: "cli", tenantId, action: "tenant.move.done", details: { to: backendId, move_id: done.id } });
    print(`${tenantId} is on ${backendId} at epoch ${done.fromEpoch + 1}; its rows on ${done.fromBackend} are deleted`);
  },

  async "tenants export"(args, { prisma, storage, print, progress }) {
    const { positionals } = parse(args, {}, ["tenant", "dir"]);
    const [tenantId, dir] = positionals as [string, string];
    const line = throttled(250, (rows: ExportProgress) => progress?.(progressLine(rows)));
    const manifest = await exportTenant(prisma, await storage.tenant(tenantId), path.resolve(dir), "cli", (rows) => line.push(rows));
    line.flush();
    for (const file of manifest.files) print(`  ${file.name}\t${file.rows} rows\t${file.bytes} bytes\tsha256 ${file.sha256}`);
    print(`exported ${tenantId} from ${manifest.backend} (snapshot ${manifest.snapshot_at}) to ${path.resolve(dir)}`);
  },

  async "tenants delete"(args, { storage, print, progress }) {
    const { values, positionals } = parse(args, { confirm: { type: "string" } }, ["tenant"]);
    const tenantId = positionals[0]!;
    // Typed confirmation, as the console asks: the slug twice, so a slip of the shell history is no deletion.
    if (values.confirm !== tenantId) throw new AppError("invalid_argument", `deleting ${tenantId} needs --confirm ${tenantId}`, ["confirm"]);
    const started = await startDeletion(storage, tenantId, "cli");
    print(started.phase === "quiesce" && started.error === null ? `deleting ${tenantId} (deletion ${started.id})` : `resuming the deletion of ${tenantId} at phase ${started.phase} (deletion ${started.id})`);
    const steps = DELETION_PHASES.length - 1;
    const line = (phase: DeletionPhase) => print(`  ${DELETION_PHASES.indexOf(phase) + 1}/${steps} ${phase}`);
    let rows = 0;
    let done: DeletionRecord;
    try {
      done = await runDeletion(storage, started, {
        beforePhase: (_deletion, phase) => line(phase),
        onBatch: (backendId, table, n) => progress?.(`    ${(rows += n).toLocaleString("en-US")} rows deleted (${backendId} ${table})`),
      });
    } catch (error) {
      // An engine took it first (engines run unfinished deletions): follow its phases instead.
      if (!(isAppError(error, "conflict") && error.message === "another process is running this move")) throw error;
      print("  an engine is running this deletion; following it");
      done = await followDeletion(storage, started, line);
    }
    const deleted = Object.values((done.detail.rows ?? {}) as Record<string, Record<string, number>>)
      .flatMap((tables) => Object.values(tables)).reduce((n, v) => n + v, 0);
    print(`${tenantId} is deleted: ${deleted.toLocaleString("en-US")} rows on its backends and its control-plane rows`);
  },

  async "limits retention"(args, { prisma, storage, config, print }) {
    const { positionals } = parse(args, {}, ["tenant", "days"]);
    const [tenantId, daysText] = positionals as [string, string];
    const days = daysText === "default" ? null : count(daysText, "days");
    if (days !== null && (days < 1 || days > 36_500)) throw new AppError("invalid_argument", "days must be from 1 to 36500, or default", ["days"]);
    const limits = await storage.setTenantLimits(tenantId, { retentionDays: days });
    await recordAudit(prisma, { actor: "cli", tenantId, action: "limits.set", details: { retention_days: limits.retentionDays } });
    print(`${tenantId} keeps finished instances ${limits.retentionDays ?? config.BULKHEAD_RETENTION_DAYS} days${limits.retentionDays === null ? " (the default)" : ""}`);
  },

  async "limits show"(args, { storage, print }) {
    const { positionals } = parse(args, {}, ["tenant"]);
    const store = await storage.tenant(positionals[0]!);
    const now = new Date();
    const budget = await store.readBudget(now);
    print(
      budget
        ? `budget\t${budget.stepsPerPeriod} steps per ${budget.periodSecs} s\t${budget.used} used since ${budget.periodStart.toISOString()}`
        : "budget\tunlimited",
    );
    const policies = await store.listRateLimitPolicies(now);
    if (policies.length === 0) print("rate\t(none)");
    for (const p of policies) print(`rate\t${p.key}\t${p.maxCount} per ${p.windowMs} ms\t${p.inWindow} in the current window`);
  },
};

/** Waits for a move another process runs, printing each phase as it is reached (or passed); its error, if it stops on one. */
async function followMove(storage: Storage, move: MoveRecord, line: (phase: MovePhase) => void): Promise<MoveRecord> {
  let printed = MOVE_PHASES.indexOf(move.phase) - 1;
  for (;;) {
    const [latest] = await storage.moves.list({ tenantId: move.tenantId, limit: 1 });
    if (!latest || latest.id !== move.id) throw new AppError("conflict", "the move is no longer recorded");
    const reached = MOVE_PHASES.indexOf(latest.phase);
    // Phases run faster than this polls: the ones passed between two looks are printed too.
    while (printed < reached && MOVE_PHASES[printed + 1] !== "done") line(MOVE_PHASES[++printed]!);
    if (latest.phase === "done") return latest;
    if (latest.error) throw new AppError("unavailable", `the move stopped in ${latest.phase}: ${latest.error}; run the command again to resume`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Runs one CLI command; returns the process exit status. Errors are one line on `printError`. */
export async function runCli(argv: string[], deps: CliDeps, printError: (line: string) => void): Promise<number> {
  const name = argv.slice(0, 2).join(" ");
  const command = commands[name];
  if (!command) {
    printError(argv.length ? `error: unknown command "${name}"\n${USAGE}` : USAGE);
    return 1;
  }
  try {
    await command(argv.slice(2), deps);
    return 0;
  } catch (error) {
    if (error instanceof AppError) {
      printError(`error: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

/** Waits for a deletion another process runs, printing each phase it reaches. */
async function followDeletion(storage: Storage, deletion: DeletionRecord, line: (phase: DeletionPhase) => void): Promise<DeletionRecord> {
  let printed = DELETION_PHASES.indexOf(deletion.phase) - 1;
  for (;;) {
    const latest = await storage.deletions.get(deletion.id);
    if (!latest) throw new AppError("conflict", "the deletion is no longer recorded");
    const reached = DELETION_PHASES.indexOf(latest.phase);
    while (printed < reached && DELETION_PHASES[printed + 1] !== "done") line(DELETION_PHASES[++printed]!);
    if (latest.phase === "done") return latest;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
