// Structured JSON logs. Children carry tenant_id / instance_id fields where they apply.
import pino from "pino";

export type Logger = pino.Logger;

export function createLogger(name: string, level: string = process.env.BULKHEAD_LOG_LEVEL ?? "info"): Logger {
  return pino({ name, level, base: { process: name, pid: process.pid } });
}
