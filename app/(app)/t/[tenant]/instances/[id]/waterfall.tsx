"use client";

import { memo, useMemo } from "react";
import type { DetailAttempt, DetailNode } from "./detail-types";
import { formatDuration, utcClock } from "./run-format";
import type { RunModel } from "./run-model";
import { useNow } from "./use-now";

type Tone = "succeeded" | "failed" | "interrupted" | "running";

interface Bar {
  key: string;
  start: number;
  end: number;
  tone: Tone;
  label: string;
}

interface Row {
  node: DetailNode;
  depth: number;
  bars: Bar[];
}

const TONE_WORD: Record<Tone, string> = { succeeded: "succeeded", failed: "failed", interrupted: "interrupted", running: "running" };
const TICKS = [0, 0.25, 0.5, 0.75, 1];
const LEGEND: [Tone, string][] = [
  ["succeeded", "succeeded"],
  ["failed", "failed"],
  ["interrupted", "interrupted by pause or cancel"],
  ["running", "running"],
];

function toneOf(attempt: DetailAttempt, open: boolean): Tone {
  if (attempt.error) return "failed";
  if (attempt.interrupted) return "interrupted";
  return open ? "running" : "succeeded";
}

/** Each step's attempts as bars; an open attempt of a live step ends at `now`. Labels give times from the run's first start, and in UTC. */
function rowsOf(model: RunModel, now: number): Row[] {
  const rows: Row[] = [];
  let origin = Infinity;
  for (const leaf of model.leaves) for (const a of leaf.attempts) origin = Math.min(origin, Date.parse(a.startedAt) || Infinity);
  for (const node of model.leaves) {
    const live = model.timing.get(node.id)?.live ?? false;
    const bars: Bar[] = [];
    for (const attempt of node.attempts) {
      const start = Date.parse(attempt.startedAt);
      const open = attempt.finishedAt === null;
      // An attempt left open by an instance that has finished has no end to draw.
      if (Number.isNaN(start) || (open && !live)) continue;
      const end = open ? Math.max(start, now) : Date.parse(attempt.finishedAt!);
      const tone = toneOf(attempt, open);
      const when = `started +${formatDuration(start - origin)} (${utcClock(start)})${open ? ", still running" : ""}`;
      const outcome = attempt.error ? `failed: ${attempt.error.message}` : attempt.interrupted ? `interrupted by ${attempt.interrupted === "paused" ? "pause" : "cancel"}` : TONE_WORD[tone];
      bars.push({
        key: `${attempt.attempt}-${attempt.startedAt}`,
        start,
        end,
        tone,
        label: `${node.blockId}, attempt ${attempt.attempt + 1}: ${when}, took ${formatDuration(end - start)}, ${outcome}`,
      });
    }
    if (bars.length > 0) rows.push({ node, depth: model.depth.get(node.id) ?? 0, bars });
  }
  return rows;
}

/**
 * The run in time: one row per step that has run, in tree order, each attempt a bar placed by its
 * start and sized by its duration against the whole run's span, so parallel branches show side by
 * side. Failed attempts are red, interrupted grey, running ones grow until now.
 */
export const Waterfall = memo(function Waterfall({ model, onSelect }: { model: RunModel; onSelect: (nodeId: string) => void }) {
  const now = useNow(model.live) ?? model.knownEnd;
  const rows = useMemo(() => rowsOf(model, now), [model, now]);
  if (rows.length === 0) {
    return <p className="empty">{model.started ? "No step has recorded an attempt yet." : "Nothing has run yet."}</p>;
  }
  const from = Math.min(...rows.map((row) => row.bars[0]!.start));
  const to = Math.max(...rows.flatMap((row) => row.bars.map((bar) => bar.end)));
  const span = Math.max(to - from, 1);
  const pct = (at: number) => `${(((at - from) / span) * 100).toFixed(3)}%`;
  return (
    <div className="waterfall">
      <div className="wf-axis" aria-hidden="true">
        <span />
        <div className="wf-ticks">
          {TICKS.map((tick) => (
            <span key={tick} style={{ left: `${tick * 100}%` }}>+{formatDuration(tick * span)}</span>
          ))}
        </div>
        <span />
      </div>
      <ol className="wf-rows" aria-label={`Step attempts over the run, ${formatDuration(span)} from the first start`}>
        {rows.map((row) => (
          <li key={row.node.id} className="wf-row" data-block-id={row.node.blockId}>
            <button
              type="button"
              className="wf-label"
              style={{ paddingLeft: `${0.35 + row.depth * 0.75}rem` }}
              onClick={() => onSelect(row.node.id)}
              title={`Show ${row.node.blockId}`}
            >
              <code>{row.node.blockId}</code>
            </button>
            <div className="wf-track">
              {row.bars.map((bar) => (
                <span
                  key={bar.key}
                  className="wf-bar"
                  data-tone={bar.tone}
                  role="img"
                  aria-label={bar.label}
                  title={bar.label}
                  style={{ left: pct(bar.start), width: `max(3px, ${(((bar.end - bar.start) / span) * 100).toFixed(3)}%)` }}
                />
              ))}
            </div>
            <span className="wf-dur">{formatDuration(row.bars.at(-1)!.end - row.bars[0]!.start)}</span>
          </li>
        ))}
      </ol>
      <p className="wf-legend muted">
        {LEGEND.map(([tone, words]) => (
          <span key={tone} className="wf-legend-item">
            <span className="wf-key" data-tone={tone} /> {words}
          </span>
        ))}
      </p>
    </div>
  );
});
