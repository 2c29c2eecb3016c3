"use client";

// Pieces shared by the instance list and the detail page: state badges and timestamps.

import type { InstanceState } from "../../../../../engine/model.ts";

export { INSTANCE_STATES, type InstanceState } from "../../../../../engine/model.ts";

const INSTANCE_BADGE: Record<InstanceState, string> = {
  scheduled: "badge badge-accent",
  running: "badge badge-accent",
  waiting: "badge badge-warn",
  paused: "badge badge-warn",
  completed: "badge badge-ok",
  failed: "badge badge-danger",
  cancelled: "badge",
};

export function InstanceStateBadge({ state }: { state: InstanceState }) {
  return <span className={INSTANCE_BADGE[state]}>{state}</span>;
}

export type NodeState = "pending" | "running" | "waiting" | "completed" | "failed" | "cancelled" | "skipped";

const NODE_BADGE: Record<NodeState, string> = {
  pending: "badge",
  running: "badge badge-accent",
  waiting: "badge badge-warn",
  completed: "badge badge-ok",
  failed: "badge badge-danger",
  cancelled: "badge",
  skipped: "badge",
};

export function NodeStateBadge({ state }: { state: NodeState }) {
  return <span className={NODE_BADGE[state]}>{state}</span>;
}

/**
 * A timestamp in the reader's locale and time zone. The server renders it in its own, so the
 * text may differ on hydration; the machine-readable `dateTime` never does.
 */
export function Time({ iso }: { iso: string | null }) {
  if (!iso) return <span className="muted">—</span>;
  return (
    <time dateTime={iso} suppressHydrationWarning>
      {new Date(iso).toLocaleString()}
    </time>
  );
}

/** The first block of a UUID: enough to tell instances apart on screen. */
export const shortId = (id: string) => id.slice(0, 8);

