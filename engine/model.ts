// Names every layer shares, browser-safe (no Node or database imports): instance states, which of
// them are terminal, the id pattern, and the JSON object test.

export const INSTANCE_STATES = ["scheduled", "running", "waiting", "paused", "completed", "failed", "cancelled"] as const;
export type InstanceState = (typeof INSTANCE_STATES)[number];

export const TERMINAL_STATES = ["completed", "failed", "cancelled"] as const satisfies readonly InstanceState[];
export type TerminalState = (typeof TERMINAL_STATES)[number];

export function isTerminal(state: string): state is TerminalState {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}

/** A UUID in its canonical text form, any case (instance, sequence and task ids). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
