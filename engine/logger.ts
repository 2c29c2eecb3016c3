// Structured JSON logs. Children carry tenant_id / instance_id fields where they apply.
import pino from "pino";

export type Logger = pino.Logger;

export function createLogger(name: string, level: string = process.env.BULKHEAD_LOG_LEVEL ?? "info"): Logger {
  return pino({ name, level, base: { process: name, pid: process.pid } });
}

/**
 * A child logger made on first use. pino serialises a child's bindings when it is made, which for
 * the run and step loggers the engine makes per instance and per step costs more than a no-op step,
 * and most are never written to.
 */
export function lazyChild(parent: Logger, bindings: pino.Bindings): Logger {
  let child: Logger | undefined;
  const made = () => (child ??= parent.child(bindings));
  return new Proxy({} as Logger, {
    get(_target, key) {
      const logger = made();
      const value = Reflect.get(logger, key, logger) as unknown;
      return typeof value === "function" ? value.bind(logger) : value;
    },
    set(_target, key, value) {
      return Reflect.set(made(), key, value);
    },
  });
}
