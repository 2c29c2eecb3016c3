"use client";

import type { InstanceDetailData } from "./detail-types";
import { attemptOf, errorOutputMessage, failedAttempt } from "./run-format";
import type { RunModel, StepFailure } from "./run-model";
import { RetryInstanceButton } from "./retry-actions";
import { StepErrorText } from "./step-error";

/**
 * Why the run failed, at the top of the page with nothing to expand: each failed step, its error
 * text and facts, and the attempt it failed on; Retry for admins. On an instance that went on
 * (a try_catch caught the failure) the caught failures are listed too, as a note.
 */
export function FailureSummary({
  tenantId, data, model, isAdmin, onShow,
}: {
  tenantId: string;
  data: InstanceDetailData;
  model: RunModel;
  isAdmin: boolean;
  onShow: (nodeId: string) => void;
}) {
  const failed = data.instance.state === "failed";
  const uncaught = model.failures.filter((f) => f.caughtBy === null);
  const shown = failed ? (uncaught.length > 0 ? uncaught : model.failures) : model.failures;
  if (!failed && shown.length === 0) return null;
  return (
    <section
      className={failed ? "card failure-summary" : "card failure-summary failure-caught"}
      aria-labelledby="failure-heading"
      role={failed ? "alert" : undefined}
    >
      <h2 id="failure-heading">
        {failed ? "This run failed" : shown.length === 1 ? "A step failed and was caught" : `${shown.length} steps failed and were caught`}
      </h2>
      {shown.length === 0 ? (
        <p>{lastErrorOutput(data) ?? "No step recorded an error: the run failed outside its steps (a deadline or the instance's own limits)."}</p>
      ) : (
        <ul className="failure-list">
          {shown.map((failure) => (
            <FailureItem key={failure.node.id} failure={failure} onShow={onShow} />
          ))}
        </ul>
      )}
      {failed &&
        (isAdmin ? (
          <RetryInstanceButton tenantId={tenantId} instanceId={data.instance.id} />
        ) : (
          <p className="muted">An admin of this tenant can retry it.</p>
        ))}
    </section>
  );
}

function FailureItem({ failure, onShow }: { failure: StepFailure; onShow: (nodeId: string) => void }) {
  const { node, caughtBy } = failure;
  return (
    <li>
      <p className="failure-step">
        Step <code>{node.blockId}</code>
        {node.handler && <> ({node.handler})</>} failed on {attemptOf(failedAttempt(node), node.maxAttempts)}
        {caughtBy && <>; <code>{caughtBy.blockId}</code> caught it and the run went on</>}.{" "}
        <button type="button" className="btn btn-small" onClick={() => onShow(node.id)}>
          Show step
        </button>
      </p>
      {node.error ? <StepErrorText error={node.error} /> : <p className="muted">It recorded no error message.</p>}
    </li>
  );
}

/** The newest `__error__` output's message: a failure the tree does not place (a flat sequence's marker row). */
function lastErrorOutput(data: InstanceDetailData): string | null {
  for (let i = data.outputs.length - 1; i >= 0; i--) {
    const output = data.outputs[i]!;
    const message = errorOutputMessage(output.outputRef, output.output);
    if (message !== null) return `${output.blockId}: ${message}`;
  }
  return null;
}
