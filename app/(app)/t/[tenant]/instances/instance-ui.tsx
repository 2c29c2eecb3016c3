"use client";

// Pieces shared by the instance list and the detail page: state badges, timestamps and short ids.

import type { InstanceState } from "../../../../../engine/model.ts";
import { shortId } from "../../../../../engine/short-id.ts";
import { LocalTime } from "../../../../_components/local-time";

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
  return <LocalTime iso={iso} />;
}

/** An id's random last group (engine/short-id.ts): ids of one batch start alike, they end apart. */
export { shortId };

/** A short id on screen, the whole id in its title (and for the search box, which finds either). */
export function ShortId({ id }: { id: string }) {
  return (
    <code title={id}>{shortId(id)}</code>
  );
}

