"use client";

import type { DetailNode } from "./detail-types";
import { Elapsed } from "./elapsed";
import { formatDuration, plural } from "./run-format";
import type { StepTiming } from "./run-model";

/** One line of a step's run: "running for 12 s" while it runs, else "3 attempts · 1.2 s". */
export function StepStats({ node, timing, knownEnd }: { node: DetailNode; timing: StepTiming; knownEnd: number }) {
  const attempts = node.attempts.length > 1 ? plural(node.attempts.length, "attempt") : null;
  if (timing.live && timing.liveSince !== null) {
    return (
      <span className="step-stats">
        {attempts && <>{attempts} · </>}
        {node.state === "waiting" ? "waiting for " : "running for "}
        <Elapsed since={timing.liveSince} fallbackNow={knownEnd} />
      </span>
    );
  }
  const duration = timing.start !== null && timing.end !== null ? formatDuration(timing.end - timing.start) : null;
  const parts = [attempts, duration, node.pausedWhileRunning ? "paused mid-run: runs again on resume" : null].filter(Boolean);
  if (parts.length === 0) return null;
  return <span className="step-stats">{parts.join(" · ")}</span>;
}

/** The state a step reads as: one with an open attempt is running, though the tree has not said so yet. */
export function shownState(node: DetailNode, timing: StepTiming | undefined): DetailNode["state"] {
  return timing?.live && node.state === "pending" ? "running" : node.state;
}
