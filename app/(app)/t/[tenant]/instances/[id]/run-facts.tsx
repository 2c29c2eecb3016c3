"use client";

import { Time } from "../instance-ui";
import { Elapsed } from "./elapsed";

interface Runtime {
  started_at?: unknown;
  current_step?: unknown;
  current_step_started_at?: unknown;
  attempt?: unknown;
  total_steps_executed?: unknown;
}

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : null);

/** context.runtime's run facts, kept by the engine: when the run started, the step it is on, how many steps it ran. Rows of the summary's list. */
export function RunFacts({ context, knownEnd, live }: { context: unknown; knownEnd: number; live: boolean }) {
  const runtime: Runtime =
    typeof context === "object" && context !== null && "runtime" in context && typeof context.runtime === "object" && context.runtime !== null
      ? context.runtime
      : {};
  const startedAt = text(runtime.started_at);
  const step = text(runtime.current_step);
  const stepSince = text(runtime.current_step_started_at);
  const attempt = typeof runtime.attempt === "number" ? runtime.attempt : null;
  return (
    <>
      <dt>Run started</dt>
      <dd>{startedAt ? <Time iso={startedAt} /> : <span className="muted">not yet</span>}</dd>
      {step && (
        <>
          <dt>Current step</dt>
          <dd>
            <code>{step}</code>
            {attempt !== null && attempt > 0 && <> · attempt {attempt + 1}</>}
            {stepSince && live && <> · for <Elapsed since={Date.parse(stepSince)} fallbackNow={knownEnd} /></>}
          </dd>
        </>
      )}
      <dt>Steps executed</dt>
      <dd>{typeof runtime.total_steps_executed === "number" ? runtime.total_steps_executed : 0}</dd>
    </>
  );
}
