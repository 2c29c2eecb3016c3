// SQL for `instance_logs` (wire-format V): an instance's log lines, oldest first. Lines come from
// `log` steps and workers' `logs`; they are logs, not state, so a step retried after its line was
// written may write it again. Bounded: LOG_LIMITS lines per instance (later ones are dropped) and
// characters per message (cut).
import { type TenantId } from "./ids.ts";
import { instanceExists, rejectUnstorableText } from "./instance-records.ts";
import type { Queryable } from "./transaction.ts";

export const LOG_LIMITS = { linesPerInstance: 1_000, messageChars: 4_096 } as const;
export const LOG_LINE_LEVELS = ["trace", "debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LINE_LEVELS)[number];

export interface LogLine {
  blockId: string;
  level: LogLevel;
  message: string;
}

export interface StoredLogLine extends LogLine {
  ts: Date;
}

/** Appends the lines the instance still has room for; how many were kept. */
export async function appendLogLines(db: Queryable, tenantId: TenantId, instanceId: string, lines: readonly LogLine[]): Promise<number> {
  if (lines.length === 0) return 0;
  try {
    const { rowCount } = await db.query({
      name: "append_log_lines",
      text: `INSERT INTO instance_logs (tenant_id, instance_id, block_id, level, message)
             SELECT $1, $2, l.block_id, l.level, l.message
               FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS l(block_id, level, message, n)
              WHERE l.n <= $6 - (SELECT count(*) FROM instance_logs WHERE tenant_id = $1 AND instance_id = $2)
              ORDER BY l.n`,
      values: [
        tenantId, instanceId, lines.map((l) => l.blockId), lines.map((l) => l.level),
        lines.map((l) => [...l.message].slice(0, LOG_LIMITS.messageChars).join("")), LOG_LIMITS.linesPerInstance,
      ],
    });
    return rowCount ?? 0;
  } catch (error) {
    throw rejectUnstorableText(error);
  }
}

/** A worker's lines for the task it reported on, under the task's instance and block; how many were kept. */
export async function appendTaskLogLines(db: Queryable, tenantId: TenantId, taskId: string, lines: readonly Omit<LogLine, "blockId">[]): Promise<number> {
  if (lines.length === 0) return 0;
  const { rows } = await db.query<{ instance_id: string; block_id: string }>({
    name: "task_log_target", text: "SELECT instance_id, block_id FROM worker_tasks WHERE tenant_id = $1 AND id = $2", values: [tenantId, taskId],
  });
  const task = rows[0];
  return task ? appendLogLines(db, tenantId, task.instance_id, lines.map((line) => ({ ...line, blockId: task.block_id }))) : 0;
}

/** The instance's lines, oldest first; null when the tenant has no such instance. */
export async function listLogLines(db: Queryable, tenantId: TenantId, instanceId: string): Promise<StoredLogLine[] | null> {
  if (!(await instanceExists(db, tenantId, instanceId))) return null;
  const { rows } = await db.query<{ block_id: string; level: LogLevel; message: string; ts: Date }>({
    name: "list_log_lines",
    text: "SELECT block_id, level, message, ts FROM instance_logs WHERE tenant_id = $1 AND instance_id = $2 ORDER BY id",
    values: [tenantId, instanceId],
  });
  return rows.map((r) => ({ blockId: r.block_id, level: r.level, message: r.message, ts: r.ts }));
}
