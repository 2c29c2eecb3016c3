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
  return new Proxy<LazyTarget>({ parent, bindings, child: undefined }, lazyHandler) as unknown as Logger;
}

interface LazyTarget {
  parent: Logger;
  bindings: pino.Bindings;
  child: Logger | undefined;
}

/** One handler for every lazy child, its state in the target: nothing is allocated per child but the two. */
const lazyHandler: ProxyHandler<LazyTarget> = {
  get(target, key) {
    const logger = (target.child ??= target.parent.child(target.bindings));
    const value = Reflect.get(logger, key, logger) as unknown;
    return typeof value === "function" ? value.bind(logger) : value;
  },
  set(target, key, value) {
    return Reflect.set((target.child ??= target.parent.child(target.bindings)), key, value);
  },
};
