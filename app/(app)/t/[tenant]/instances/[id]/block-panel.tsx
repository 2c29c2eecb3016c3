"use client";

import { useEffect, useRef } from "react";
import { NodeStateBadge, Time } from "../instance-ui";
import { AttemptsTable } from "./attempts-table";
import type { DetailNode, InstanceDetailData } from "./detail-types";
import { attemptOf, attemptsSummary, failedAttempt } from "./run-format";
import { isLeaf, type RunModel } from "./run-model";
import { RetryFromStepButton } from "./retry-actions";
import { StepErrorText } from "./step-error";
import { shownState, StepStats } from "./step-stats";

/** Instance states resume-from starts from (wire-format J): nothing may be running while the tree is rebuilt. */
const RESUMABLE = new Set(["failed", "paused", "completed", "cancelled"]);

/**
 * The selected block in full: what it is, its state and times, its definition's handler and
 * params, its output, its error and every attempt. Beside the tree on a wide screen, under it on
 * a narrow one (scrolled to when it opens out of sight).
 */
export function BlockPanel({
  id, tenantId, data, model, node, isAdmin, onClose,
}: {
  id: string;
  tenantId: string;
  data: InstanceDetailData;
  model: RunModel;
  node: DetailNode | null;
  isAdmin: boolean;
  onClose: () => void;
}) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    const panel = ref.current;
    if (!node || !panel) return;
    const { top, bottom } = panel.getBoundingClientRect();
    if (top > window.innerHeight || bottom < 0) panel.scrollIntoView({ block: "start", behavior: "smooth" });
  }, [node?.id]); // eslint-disable-line react-hooks/exhaustive-deps -- only when another block opens, not on every refresh

  return (
    <aside id={id} ref={ref} className="card block-panel" aria-label={node ? `Block ${node.blockId}` : "Block details"}>
      {node ? (
        <BlockDetails tenantId={tenantId} data={data} model={model} node={node} isAdmin={isAdmin} onClose={onClose} />
      ) : (
        <p className="empty">Select a block in the tree for its params, output, error, attempts, duration and worker.</p>
      )}
    </aside>
  );
}

function BlockDetails({
  tenantId, data, model, node, isAdmin, onClose,
}: {
  tenantId: string;
  data: InstanceDetailData;
  model: RunModel;
  node: DetailNode;
  isAdmin: boolean;
  onClose: () => void;
}) {
  const timing = model.timing.get(node.id);
  const state = shownState(node, timing);
  const leaf = isLeaf(node);
  const output = model.latestOutput.get(node.blockId);
  const task = data.workerTasks.findLast((t) => t.blockId === node.blockId);
  const workerId = node.attempts.findLast((a) => a.workerId)?.workerId ?? task?.workerId ?? null;
  const parent = node.parentId ? model.byId.get(node.parentId) : undefined;
  const canRetryFrom =
    isAdmin && node.parentId === null && (node.state === "failed" || node.state === "completed") && RESUMABLE.has(data.instance.state);

  return (
    <>
      <div className="block-panel-head">
        <h2 className="block-panel-title">
          <code>{node.blockId}</code>
        </h2>
        <button type="button" className="btn btn-small" onClick={onClose} aria-label="Close block details">
          Close
        </button>
      </div>
      <dl className="facts">
        <dt>Type</dt>
        <dd>
          {node.blockType.replaceAll("_", " ")}
          {parent && (
            <span className="muted">
              {" "}in <code>{parent.blockId}</code>
              {model.armLabel.has(node.id) && <>, {model.armLabel.get(node.id)}</>}
            </span>
          )}
        </dd>
        <dt>State</dt>
        <dd>
          <NodeStateBadge state={state} />
          {timing && <> <StepStats node={node} timing={timing} knownEnd={model.knownEnd} /></>}
        </dd>
        {leaf && (
          <>
            <dt>Handler</dt>
            <dd>{node.handler ? <code>{node.handler}</code> : node.blockType === "sub_sequence" ? "a child instance" : <span className="muted">not in the stored definition</span>}</dd>
            <dt>Attempts</dt>
            <dd>
              {node.attempts.length === 0
                ? "none yet"
                : state === "failed"
                  ? `failed on ${attemptOf(failedAttempt(node), node.maxAttempts)}`
                  : attemptsSummary(node)}
            </dd>
            <dt>Started</dt>
            <dd><Time iso={node.attempts[0]?.startedAt ?? node.startedAt} /></dd>
            <dt>Finished</dt>
            <dd><Time iso={node.completedAt} /></dd>
            <dt>Worker</dt>
            <dd>
              {workerId ? (
                <code>{workerId}</code>
              ) : (
                <span className="muted">{task ? "not claimed yet" : node.attempts.length > 0 ? "none: the engine ran it" : "—"}</span>
              )}
            </dd>
          </>
        )}
      </dl>

      {node.error && (
        <>
          <h3>Error</h3>
          <StepErrorText error={node.error} />
        </>
      )}

      {leaf && (
        <>
          <h3>Attempts</h3>
          <AttemptsTable attempts={node.attempts} live={timing?.live ?? false} knownEnd={model.knownEnd} />
        </>
      )}

      {leaf && (
        <>
          <h3>{node.blockType === "sub_sequence" ? "Input" : "Params"}</h3>
          <p className="muted block-panel-note">As defined in the sequence: the values its templates resolved to are not stored.</p>
          <pre className="json" tabIndex={0} aria-label={`Params of ${node.blockId} as JSON`}>
            {JSON.stringify(node.params, null, 2)}
          </pre>
        </>
      )}

      <h3>Output</h3>
      {output ? (
        <pre className="json" tabIndex={0} aria-label={`Output of ${node.blockId} as JSON`}>
          {JSON.stringify(output.output, null, 2)}
        </pre>
      ) : (
        <p className="muted">{noOutput(node, data.outputsTruncated)}</p>
      )}

      {canRetryFrom && <RetryFromStepButton tenantId={tenantId} instanceId={data.instance.id} blockId={node.blockId} />}
    </>
  );
}

function noOutput(node: DetailNode, truncated: boolean): string {
  if (truncated) return "None among the latest outputs this page shows.";
  if (!isLeaf(node)) return "A composite block has no output of its own.";
  if (node.state === "failed") return "None: it failed.";
  if (node.state === "completed" || node.state === "cancelled" || node.state === "skipped") return "None was recorded.";
  return "No output yet.";
}
