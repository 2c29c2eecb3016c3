"use client";

import { Fragment } from "react";
import type { DetailAttempt } from "./detail-types";
import { Elapsed } from "./elapsed";
import { clockTime, errorFacts, formatDuration } from "./run-format";

type Outcome = "failed" | "interrupted" | "running" | "succeeded" | "unknown";

const INTERRUPTED = { paused: "interrupted by pause", cancelled: "interrupted by cancel" } as const;

function outcomeOf(attempt: DetailAttempt, live: boolean): Outcome {
  if (attempt.error) return "failed";
  if (attempt.interrupted) return "interrupted";
  if (attempt.finishedAt === null) return live ? "running" : "unknown";
  return "succeeded";
}

/**
 * A step's attempts, oldest first: when each started, how long it took, who ran it and how it
 * ended. A failed attempt's error gets a full-width row of its own under it, so the table fits
 * the narrow panel without hiding a column.
 */
export function AttemptsTable({ attempts, live, knownEnd }: { attempts: DetailAttempt[]; live: boolean; knownEnd: number }) {
  if (attempts.length === 0) return <p className="muted">No attempt has started yet.</p>;
  return (
    <div className="table-wrap">
      <table className="table attempts-table" aria-label="Attempts">
        <thead>
          <tr>
            <th scope="col">Attempt</th>
            <th scope="col">Started</th>
            <th scope="col">Duration</th>
            <th scope="col">Worker</th>
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((attempt) => {
            const outcome = outcomeOf(attempt, live);
            return (
              <Fragment key={`${attempt.attempt}-${attempt.startedAt}`}>
                <tr data-outcome={outcome} className={attempt.error ? "has-error" : undefined}>
                  <th scope="row">{attempt.attempt + 1}</th>
                  <td>
                    <time dateTime={attempt.startedAt} title={attempt.startedAt} suppressHydrationWarning>
                      {clockTime(attempt.startedAt)}
                    </time>
                  </td>
                  <td>
                    {attempt.finishedAt !== null ? (
                      formatDuration(Date.parse(attempt.finishedAt) - Date.parse(attempt.startedAt))
                    ) : outcome === "running" ? (
                      <>running for <Elapsed since={Date.parse(attempt.startedAt)} fallbackNow={knownEnd} /></>
                    ) : (
                      <span className="muted">no end recorded</span>
                    )}
                  </td>
                  <td>{attempt.workerId ? <code>{attempt.workerId}</code> : <span className="muted" title="The engine ran it in process">engine</span>}</td>
                  <td>{attempt.interrupted ? INTERRUPTED[attempt.interrupted] : outcome === "unknown" ? "—" : outcome}</td>
                </tr>
                {attempt.error && (
                  <tr className="attempt-error-row" data-error-of={attempt.attempt + 1}>
                    <td colSpan={5}>
                      <span className="visually-hidden">Attempt {attempt.attempt + 1} error: </span>
                      <span className="step-error-message">{attempt.error.message}</span>{" "}
                      <span className="muted">({errorFacts(attempt.error).join(" · ")})</span>
                    </td>
                  </tr>
                )}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
