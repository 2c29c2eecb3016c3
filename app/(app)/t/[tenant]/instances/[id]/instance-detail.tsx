"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useCallback, useId, useMemo, useState } from "react";
import { useInstanceStream } from "../../../../../_components/live";
import { RunGraph, type NodeState } from "../../../../../_components/sequence-graph/run-graph";
import { useTRPC } from "../../../../../_components/trpc";
import { QueryError } from "../../../../../_components/query-error";
import { ConfirmButton } from "../../../../../_components/confirm-button";
import { HumanInputForm } from "../../human-input-form";
import { InstanceStateBadge, shortId, Time } from "../instance-ui";
import { BlockPanel } from "./block-panel";
import { BlockTree } from "./block-tree";
import type { InstanceDetailData } from "./detail-types";
import { FailureSummary } from "./failure-summary";
import { RunFacts } from "./run-facts";
import { runModel } from "./run-model";
import { SignalsPanel } from "./signals-panel";
import { Timeline } from "./timeline";
import { Waterfall } from "./waterfall";

/** Polling while the live stream is unavailable, and a slow backstop while it is up. */
const POLL_MS = 3_000;
const BACKSTOP_MS = 30_000;
const PRIORITIES = ["low", "normal", "high", "critical"];

export function InstanceDetail({
  tenantId, instanceId, initial, isAdmin,
}: {
  tenantId: string;
  instanceId: string;
  initial: InstanceDetailData;
  /** Offers Retry and "retry from this step"; the procedures check the role again. */
  isAdmin: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // Followed by server push while it runs: each change the stream tells of refetches the page.
  const live = useInstanceStream(tenantId, instanceId, initial.can.signal, () =>
    void queryClient.invalidateQueries({ queryKey: trpc.instances.get.queryKey({ tenantId, instanceId }) }),
  );
  const detail = useQuery({
    ...trpc.instances.get.queryOptions({ tenantId, instanceId }),
    initialData: initial,
    // A finished instance changes no more; a live one is pushed, or polled when the stream is down.
    refetchInterval: (query) => (query.state.data?.can.signal === false ? false : live === "live" ? BACKSTOP_MS : POLL_MS),
  });
  const data = detail.data ?? initial;
  const { instance, sequence, can } = data;
  // Once per answer (the query keeps an unchanged answer's identity), however many nodes it has.
  const model = useMemo(() => runModel(data), [data]);
  const waitingForInput = useMemo(() => new Set(data.pendingInputs.map((gate) => gate.blockId)), [data.pendingInputs]);
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const select = useCallback((nodeId: string) => setSelectedId(nodeId), []);
  const panelId = useId();
  const selected = selectedId === null ? null : (model.byId.get(selectedId) ?? null);
  // The graph names blocks by block id, the tree and panel by node id.
  const byBlock = useMemo(() => new Map(data.nodes.map((node) => [node.blockId, node])), [data.nodes]);
  const statusOf = useCallback((blockId: string) => byBlock.get(blockId)?.state as NodeState | undefined, [byBlock]);
  const selectBlock = useCallback((blockId: string) => {
    const node = byBlock.get(blockId);
    if (node) setSelectedId(node.id);
  }, [byBlock]);

  return (
    <>
      <div className="page-header">
        <p>
          <Link prefetch={false} href={`/t/${tenantId}/instances`}>← All instances</Link>
        </p>
        <div className="header-row">
          <h1>
            Instance <code>{shortId(instance.id)}</code>
          </h1>
          <InstanceStateBadge state={instance.state} />
        </div>
        <p>
          {sequence.name === null ? "Its sequence is missing" : <>{sequence.name} v{sequence.version}</>} · created{" "}
          <Time iso={instance.createdAt} /> · updated <Time iso={instance.updatedAt} />
        </p>
      </div>
      {/* A failed refresh keeps the last answer on screen and says so. */}
      {detail.error && <QueryError error={detail.error} />}

      <FailureSummary tenantId={tenantId} data={data} model={model} isAdmin={isAdmin} onShow={select} />

      <section className="card" aria-labelledby="summary-heading">
        <h2 id="summary-heading">Summary</h2>
        <dl className="facts">
          <dt>Id</dt>
          <dd><code>{instance.id}</code></dd>
          <dt>Sequence</dt>
          <dd>
            {sequence.name === null ? <span className="muted">missing</span> : <>{sequence.name} v{sequence.version}</>} <span className="muted">({sequence.namespace})</span>{" "}
            <code>{sequence.id}</code>
          </dd>
          <dt>State</dt>
          <dd>
            <InstanceStateBadge state={instance.state} />
            {instance.deferReason && <span className="muted"> deferred: {instance.deferReason}</span>}
          </dd>
          {instance.state === "scheduled" && (
            <>
              <dt>Next run</dt>
              <dd><Time iso={instance.nextFireAt} /></dd>
            </>
          )}
          <RunFacts context={instance.context} knownEnd={model.knownEnd} live={model.live} />
          <dt>Priority</dt>
          <dd>{PRIORITIES[instance.priority] ?? instance.priority}</dd>
          <dt>Time zone</dt>
          <dd>{instance.timezone}</dd>
          {instance.parentInstanceId && (
            <>
              <dt>Parent</dt>
              <dd>
                <Link prefetch={false} href={`/t/${tenantId}/instances/${instance.parentInstanceId}`}>
                  <code>{shortId(instance.parentInstanceId)}</code>
                </Link>
              </dd>
            </>
          )}
        </dl>
        <Actions tenantId={tenantId} instanceId={instance.id} can={can} />
      </section>

      {data.pendingInputs.length > 0 && (
        <section className="card" aria-labelledby="input-heading">
          <h2 id="input-heading">Waiting for input</h2>
          {data.pendingInputs.map((gate) => (
            <HumanInputForm key={gate.blockId} tenantId={tenantId} instanceId={instance.id} gate={gate} />
          ))}
        </section>
      )}

      {data.hasTree && data.blocks.length > 0 && (
        <section className="card" aria-labelledby="graph-heading">
          <h2 id="graph-heading">Run</h2>
          <p className="muted status-line">
            {live === "live" ? "Live: changes appear as they happen." : live === "connecting" ? "Connecting to live updates…" : live === "ended" ? "Finished." : "Live updates are unavailable: refreshing every few seconds."}
          </p>
          <RunGraph blocks={data.blocks} statusOf={statusOf} selected={selected?.blockId ?? null} onSelect={selectBlock} />
        </section>
      )}

      <div className="run-view">
        <section className="card run-view-tree" aria-labelledby="tree-heading">
          <h2 id="tree-heading">Blocks</h2>
          <BlockTree
            hasTree={data.hasTree}
            model={model}
            waitingForInput={waitingForInput}
            selectedId={selectedId}
            panelId={panelId}
            onSelect={select}
          />
        </section>
        <BlockPanel
          id={panelId}
          tenantId={tenantId}
          data={data}
          model={model}
          node={selected}
          isAdmin={isAdmin}
          onClose={() => setSelectedId(null)}
        />
      </div>

      <section className="card" aria-labelledby="waterfall-heading">
        <h2 id="waterfall-heading">Waterfall</h2>
        <Waterfall model={model} onSelect={select} />
      </section>

      <section className="card" aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Outputs and events</h2>
        <Timeline
          createdAt={instance.createdAt}
          started={model.started}
          outputs={data.outputs}
          outputsTruncated={data.outputsTruncated}
          workerTasks={data.workerTasks}
        />
      </section>

      <section className="card" aria-labelledby="context-heading">
        <h2 id="context-heading">Context</h2>
        <pre className="json" tabIndex={0} aria-label="Instance context as JSON">
          {JSON.stringify(instance.context, null, 2)}
        </pre>
        {instance.metadata !== null && (
          <>
            <h3>Metadata</h3>
            <pre className="json" tabIndex={0} aria-label="Instance metadata as JSON">
              {JSON.stringify(instance.metadata, null, 2)}
            </pre>
          </>
        )}
      </section>

      <section className="card" aria-labelledby="signals-heading">
        <h2 id="signals-heading">Signals</h2>
        <SignalsPanel tenantId={tenantId} instanceId={instance.id} signals={data.signals} canSignal={can.signal} />
      </section>
    </>
  );
}

const ACTION_LABEL = { pause: "Pause", resume: "Resume", cancel: "Cancel" } as const;

/** Pause, Resume and Cancel, each offered only where F.2 allows it; Cancel asks first. */
function Actions({ tenantId, instanceId, can }: { tenantId: string; instanceId: string; can: InstanceDetailData["can"] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [sent, setSent] = useState<string | null>(null);
  const signal = useMutation(
    trpc.instances.signal.mutationOptions({
      onMutate: () => setSent(null),
      onSuccess: (_result, { signal }) => setSent(`${ACTION_LABEL[signal.type as keyof typeof ACTION_LABEL]} sent: the engine applies it within moments.`),
      onSettled: () => queryClient.invalidateQueries(trpc.instances.pathFilter()),
    }),
  );
  const send = (type: keyof typeof ACTION_LABEL) => signal.mutate({ tenantId, instanceId, signal: { type } });
  const pending = (type: keyof typeof ACTION_LABEL) => signal.isPending && signal.variables?.signal.type === type;
  return (
    <>
      <div className="instance-actions" role="group" aria-label="Instance actions">
        <button
          type="button"
          className="btn"
          onClick={() => send("pause")}
          disabled={!can.pause || signal.isPending}
          title={can.pause ? undefined : "Only a scheduled or running instance can be paused"}
        >
          {pending("pause") ? "Pausing…" : "Pause"}
        </button>
        <button
          type="button"
          className="btn"
          onClick={() => send("resume")}
          disabled={!can.resume || signal.isPending}
          title={can.resume ? undefined : "Only a paused instance can be resumed"}
        >
          {pending("resume") ? "Resuming…" : "Resume"}
        </button>
        <ConfirmButton
          label="Cancel instance"
          question="Cancel this instance? It cannot be undone."
          confirmLabel="Cancel instance"
          cancelLabel="Keep it"
          pending={pending("cancel")}
          pendingLabel="Cancelling…"
          disabled={!can.cancel || signal.isPending}
          prominent
          onConfirm={() => send("cancel")}
        />
      </div>
      {!can.signal && <p className="muted status-line">The instance has finished: it takes no more signals.</p>}
      {signal.error && (
        <div className="alert alert-error" role="alert">
          Could not send the signal: {signal.error.message}
        </div>
      )}
      <p className="status-line" role="status">{sent}</p>
    </>
  );
}
