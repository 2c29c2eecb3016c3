"use client";

import { keepPreviousData, useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useLiveRefresh } from "../../../../_components/live";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { HumanInputForm } from "../human-input-form";
import { ShortId, Time } from "../instances/instance-ui";
import styles from "./approvals.module.css";
import { PAGE_SIZE } from "./page-size";

/** Without server push: how often the list refreshes itself. */
const POLL_MS = 5_000;

/**
 * The tenant's waiting human reviews, a page at a time (keyset, server-side), each answerable in
 * place through the instance page's own form. Refreshed as the tenant's instances change, so a
 * new gate appears and an answered one (its instance no longer waits) goes.
 */
export function ApprovalsInbox({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const [sequenceId, setSequenceId] = useState("");
  const [answered, setAnswered] = useState<string | null>(null);
  const input = { tenantId, limit: PAGE_SIZE, ...(sequenceId ? { sequenceId } : {}) };
  const refetchInterval = useLiveRefresh(tenantId, trpc.approvals.list.infiniteQueryKey(input), POLL_MS);
  const list = useInfiniteQuery(
    trpc.approvals.list.infiniteQueryOptions(input, {
      getNextPageParam: (last) => last.next,
      refetchInterval,
      // The last answer stays on screen (marked busy) while another sequence's loads.
      placeholderData: keepPreviousData,
    }),
  );
  const sequences = useQuery(trpc.overview.sequences.queryOptions({ tenantId }));
  const items = list.data?.pages.flatMap((page) => page.items) ?? [];
  const chosen = sequences.data?.find((s) => s.id === sequenceId);

  let body;
  if (!list.data && list.error) body = <QueryError error={list.error} />;
  else if (!list.data) body = <div className="skeleton" aria-busy="true" aria-label="Loading approvals" />;
  else if (items.length === 0 && !list.hasNextPage) {
    body = (
      <p className="empty">
        {chosen ? <>Nothing of {chosen.name} v{chosen.version} waits for an answer.</> : "Nothing waits for an answer: no running instance is at a human review."}
      </p>
    );
  } else {
    body = (
      <>
        <ul className={styles.list} aria-label="Waiting approvals" aria-busy={list.isPlaceholderData}>
          {items.map((item) => (
            <li key={`${item.instanceId}:${item.blockId}`} className={`card ${styles.item}`} aria-label={`${item.prompt || item.blockId} · instance ${item.instanceId}`}>
              <div className={styles.head}>
                <strong>{item.sequenceName ?? <span className="muted">missing sequence</span>}</strong>
                <span className="muted">
                  waiting since <Time iso={item.waitingSince} />
                </span>
              </div>
              <p className={`muted ${styles.facts}`}>
                Instance{" "}
                <Link prefetch={false} href={`/t/${tenantId}/instances/${item.instanceId}`} title={item.instanceId}>
                  <ShortId id={item.instanceId} />
                  <span className="visually-hidden"> (open instance)</span>
                </Link>
                {item.namespace !== "default" && <> · namespace <code>{item.namespace}</code></>}
                {item.storeAs && <> · answer stored as <code>{item.storeAs}</code></>}
                {item.escalationHandler && <> · unanswered, escalates to <code>{item.escalationHandler}</code></>}
              </p>
              <HumanInputForm
                tenantId={tenantId}
                instanceId={item.instanceId}
                gate={{ ...item, timesOutAt: item.deadline }}
                onAnswered={() => setAnswered(`Answer sent for ${item.prompt || item.blockId} (instance ${item.instanceId.slice(0, 8)}): the run goes on.`)}
              />
            </li>
          ))}
        </ul>
        {items.length === 0 && <p className="empty">No waiting review among the instances read so far: load more to look further.</p>}
        <div className="toolbar">
          {list.hasNextPage ? (
            <button type="button" className="btn" onClick={() => list.fetchNextPage()} disabled={list.isFetchingNextPage}>
              {list.isFetchingNextPage ? "Loading…" : "Load more"}
            </button>
          ) : (
            <span className="muted">That is all of them.</span>
          )}
          <span className="muted">
            Showing {items.length.toLocaleString("en-US")} {items.length === 1 ? "review" : "reviews"}
          </span>
        </div>
        {/* A failed refresh or next page keeps what is on screen and says so. */}
        {list.error && <QueryError error={list.error} />}
      </>
    );
  }

  return (
    <>
      <form className="filters" role="search" aria-label="Filter approvals" onSubmit={(event) => event.preventDefault()}>
        <label htmlFor="approvals-sequence">
          Sequence
          <select
            id="approvals-sequence"
            className="input"
            value={sequenceId}
            onChange={(event) => setSequenceId(event.target.value)}
            aria-describedby={sequences.error ? "approvals-sequence-error" : undefined}
          >
            <option value="">All sequences</option>
            {sequences.data?.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name} v{s.version}
              </option>
            ))}
          </select>
        </label>
        {sequences.error && (
          <p id="approvals-sequence-error" className="field-error">
            Could not load the sequences: {sequences.error.message}
          </p>
        )}
      </form>
      <p className="status-line" role="status">{answered}</p>
      {body}
    </>
  );
}
