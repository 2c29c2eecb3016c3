"use client";

import type { ReactNode } from "react";
import { Time } from "../instance-ui";
import type { InstanceDetailData } from "./detail-types";
import { errorOutputMessage } from "./run-format";

type Tone = "ok" | "danger" | "accent" | "warn" | "plain";

interface Entry {
  key: string;
  at: string;
  tone: Tone;
  title: ReactNode;
  note?: string | null;
  /** A failure's text, shown as it is (never the `__error__` JSON it was stored as). */
  error?: string;
  json?: unknown;
}

const EVENT_TONE: Record<string, Tone> = {
  claimed: "accent",
  reclaimed: "warn",
  completed: "ok",
  failed: "danger",
  timed_out: "danger",
  cancelled: "plain",
  stale_mutation_rejected: "warn",
};

function outputEntry(output: InstanceDetailData["outputs"][number]): Entry {
  const block = <code>{output.blockId}</code>;
  const attempt = output.attempt > 0 ? ` (attempt ${output.attempt + 1})` : "";
  const base = { key: `output-${output.id}`, at: output.createdAt };
  switch (output.outputRef) {
    case "__in_progress__":
      return { ...base, tone: "accent", title: <>{block} started{attempt}</> };
    case "__retry__":
      return { ...base, tone: "warn", title: <>{block} will retry{attempt}</>, json: output.output };
    default: {
      const error = errorOutputMessage(output.outputRef, output.output);
      if (error !== null) return { ...base, tone: "danger", title: <>{block} failed{attempt}</>, error };
      return { ...base, tone: "ok", title: <>Output of {block}{attempt}</>, json: output.output };
    }
  }
}

/** Outputs and worker-task events, oldest first, on one rail. */
export function Timeline({
  createdAt, started, outputs, outputsTruncated, workerTasks,
}: {
  createdAt: string;
  /** Some step has started (it may have no output yet): not "nothing has run". */
  started: boolean;
  outputs: InstanceDetailData["outputs"];
  outputsTruncated: boolean;
  workerTasks: InstanceDetailData["workerTasks"];
}) {
  const entries: Entry[] = [
    { key: "created", at: createdAt, tone: "accent", title: "Instance created" },
    ...outputs.map(outputEntry),
    ...workerTasks.flatMap((task): Entry[] => [
      {
        key: `task-${task.id}`,
        at: task.createdAt,
        tone: "plain",
        title: <><code>{task.blockId}</code> handed to workers of <code>{task.handlerName}</code>{task.queueName && <> (queue <code>{task.queueName}</code>)</>}</>,
      },
      ...task.attempts.map((attempt): Entry => ({
        key: `attempt-${attempt.id}`,
        at: attempt.createdAt,
        tone: EVENT_TONE[attempt.event] ?? "plain",
        title: <><code>{task.blockId}</code>: {attempt.event.replaceAll("_", " ")}{attempt.workerId && <> by <code>{attempt.workerId}</code></>}</>,
        note: attempt.reason,
      })),
    ]),
  ];
  // Stable: entries at the same millisecond keep the order above (creation, then outputs, then tasks).
  entries.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  return (
    <>
      {outputsTruncated && <p className="muted">Older outputs are not shown: only the latest ones are.</p>}
      <ol className="timeline" aria-label="Timeline, oldest first">
        {entries.map((entry) => (
          <li key={entry.key} data-tone={entry.tone}>
            <Time iso={entry.at} />
            <div>{entry.title}</div>
            {entry.note && <div className="muted">{entry.note}</div>}
            {entry.error && <p className="step-error-message timeline-error">{entry.error}</p>}
            {entry.json !== undefined && (
              <details>
                <summary>Show output</summary>
                <pre className="json" tabIndex={0}>{JSON.stringify(entry.json, null, 2)}</pre>
              </details>
            )}
          </li>
        ))}
      </ol>
      {entries.length === 1 && <p className="empty">{started ? "No output yet: the steps that started are in the waterfall." : "Nothing has run yet."}</p>}
    </>
  );
}
