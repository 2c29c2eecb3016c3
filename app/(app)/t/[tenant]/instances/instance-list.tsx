"use client";

import { keepPreviousData, useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname, useSearchParams } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { BACKSTOP_MS, useTenantChanges } from "../../../../_components/live";
import { useTRPC } from "../../../../_components/trpc";
import { QueryError } from "../../../../_components/query-error";
import { INSTANCE_STATES, InstanceStateBadge, ShortId, Time } from "./instance-ui";
import { InstanceSearchBox } from "./instance-search-box";
import { BulkActions } from "./bulk-actions";
import styles from "./instance-search.module.css";
import { parseInstanceSearch } from "../../../../../engine/instance-search.ts";
import { listInput, readFilters, writeFilters, type Filters } from "./list-input";

const LIVE_MS = 5_000;

/** `canManage`: a tenant admin, who gets the bulk actions (the procedures refuse anyone else). */
export function InstanceList({ tenantId, canManage }: { tenantId: string; canManage: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const pathname = usePathname();
  const fromAddress = readFilters(useSearchParams());
  const addressQuery = writeFilters(fromAddress);
  // The filters live in the address (replaceState: no server round trip; Next.js follows it in
  // useSearchParams, a render later). Until it has, the inputs show the change from here, so a
  // ticked box stays ticked and two quick changes both stick. Back/forward resets to the address.
  const [shown, setShown] = useState<{ filters: Filters; from: string } | null>(null);
  const filters = shown && (addressQuery === shown.from || addressQuery === writeFilters(shown.filters)) ? shown.filters : fromAddress;
  // The newest filters, also between a change and the render that shows it.
  const latest = useRef(filters);
  useEffect(() => {
    latest.current = filters;
  });
  const setFilters = (next: Partial<Filters> | ((current: Filters) => Partial<Filters>)) => {
    const merged = { ...latest.current, ...(typeof next === "function" ? next(latest.current) : next) };
    latest.current = merged;
    setShown({ filters: merged, from: addressQuery });
    const query = writeFilters(merged);
    window.history.replaceState(null, "", query ? `${pathname}?${query}` : pathname);
  };
  const narrowed = filters.states.length > 0 || Boolean(filters.sequence || filters.after || filters.before);
  const filtered = narrowed || filters.q.trim() !== "";
  const parsed = parseInstanceSearch(filters.q);
  const search = parsed !== null && "search" in parsed ? parsed.search : undefined;
  const searchError = parsed !== null && "error" in parsed ? parsed.error : null;

  const input = listInput(tenantId, filters, search);
  // Refetched when any of the tenant's instances changes state (server push); polled without it.
  const pushed = useTenantChanges(tenantId, () => void queryClient.invalidateQueries({
    queryKey: trpc.instances.list.infiniteQueryKey(input),
    predicate: (query) => ((query.state.data as { pages?: unknown[] } | undefined)?.pages?.length ?? 1) <= 1,
  }));
  const list = useInfiniteQuery(
    trpc.instances.list.infiniteQueryOptions(input, {
      getNextPageParam: (last) => last.next,
      // Only the first page follows along: refetching older pages as rows arrive would shift
      // them under the reader, so live refresh stops once more pages are loaded.
      refetchInterval: (query) => ((query.state.data?.pages.length ?? 1) <= 1 ? (pushed === "live" ? BACKSTOP_MS : LIVE_MS) : false),
      placeholderData: keepPreviousData,
      // Text that is no search asks nothing: the box says what is wrong with it.
      enabled: searchError === null,
    }),
  );
  const sequences = useQuery(trpc.overview.sequences.queryOptions({ tenantId }));

  const pages = list.data?.pages ?? [];
  const items = pages.flatMap((page) => page.items);
  const live = pages.length <= 1;
  const searching = search !== undefined && list.isPlaceholderData;
  // A whole id the tenant has: offered as a link straight to it.
  const exact = search?.kind === "id" && !list.isPlaceholderData ? items.find((item) => item.id === search.id) : undefined;

  return (
    <>
      <section className="card" aria-labelledby="filters-heading">
        <h2 id="filters-heading">Filters</h2>
        <form className="filters" role="search" aria-label="Filter instances" onSubmit={(event) => event.preventDefault()}>
          <InstanceSearchBox applied={filters.q} onApply={(q) => setFilters({ q })} error={searchError} searching={searching} />
          <fieldset className="checks">
            <legend>State</legend>
            <div className="checks-row">
              {INSTANCE_STATES.map((state) => (
                <label key={state}>
                  <input
                    type="checkbox"
                    name="state"
                    value={state}
                    checked={filters.states.includes(state)}
                    onChange={(event) => {
                      const checked = event.target.checked;
                      setFilters((current) => ({
                        states: checked
                          ? INSTANCE_STATES.filter((s) => s === state || current.states.includes(s))
                          : current.states.filter((s) => s !== state),
                      }));
                    }}
                  />
                  {state}
                </label>
              ))}
            </div>
          </fieldset>
          <label>
            Sequence
            <select
              className="select"
              value={filters.sequence}
              onChange={(event) => setFilters({ sequence: event.target.value })}
              aria-describedby={sequences.error ? "sequence-filter-error" : undefined}
            >
              <option value="">All sequences</option>
              {sequences.data?.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name} v{s.version} ({s.namespace})
                </option>
              ))}
            </select>
          </label>
          {sequences.error && (
            <p id="sequence-filter-error" className="field-error">
              Could not load the sequences: {sequences.error.message}
            </p>
          )}
          <label>
            Created from
            <input className="input" type="datetime-local" value={filters.after} onChange={(event) => setFilters({ after: event.target.value })} />
          </label>
          <label>
            Created before
            <input className="input" type="datetime-local" value={filters.before} onChange={(event) => setFilters({ before: event.target.value })} />
          </label>
          <button type="button" className="btn" onClick={() => setFilters({ states: [], sequence: "", after: "", before: "", q: "" })} disabled={!filtered}>
            Clear filters
          </button>
        </form>
      </section>

      {canManage && <BulkActions tenantId={tenantId} list={filters} />}

      <section className="card" aria-labelledby="instances-heading">
        <h2 id="instances-heading">Instances</h2>
        {exact && (
          <p className={`notice ${styles.found}`} role="status">
            <span>
              Instance <ShortId id={exact.id} /> has this id.
            </span>
            <Link prefetch={false} className="btn btn-small" href={`/t/${tenantId}/instances/${exact.id}`}>
              Open instance
            </Link>
          </p>
        )}
        {searchError !== null ? (
          <p className="empty">Nothing searched: the search box says what it needs.</p>
        ) : !list.data && list.error ? (
          <QueryError error={list.error} />
        ) : !list.data ? (
          <div className="skeleton" aria-busy="true" aria-label="Loading instances" />
        ) : items.length === 0 && !searching ? (
          <p className="empty">
            {search !== undefined
              ? <>No instance matches “{filters.q.trim()}”{narrowed && " with these filters"}.</>
              : filtered ? "No instances match these filters." : "No instances yet. Start one through the REST API or the editor."}
          </p>
        ) : items.length === 0 ? (
          <div className="skeleton" aria-busy="true" aria-label="Searching instances" />
        ) : (
          <>
            <div className="table-wrap">
              <table className="table" aria-label="Instances" aria-busy={list.isPlaceholderData}>
                <thead>
                  <tr>
                    <th scope="col">Instance</th>
                    <th scope="col">Sequence</th>
                    <th scope="col">State</th>
                    <th scope="col">Created</th>
                    <th scope="col">Updated</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((item) => (
                    <tr key={item.id}>
                      <td>
                        <Link prefetch={false} href={`/t/${tenantId}/instances/${item.id}`} title={item.id}>
                          <ShortId id={item.id} />
                          <span className="visually-hidden"> (open instance)</span>
                        </Link>
                      </td>
                      <td>
                        {item.sequenceName === null ? (
                          <span className="muted">
                            missing <ShortId id={item.sequenceId} />
                          </span>
                        ) : (
                          <>
                            {item.sequenceName} <span className="muted">v{item.sequenceVersion}</span>
                          </>
                        )}
                      </td>
                      <td><InstanceStateBadge state={item.state} /></td>
                      <td><Time iso={item.createdAt} /></td>
                      <td><Time iso={item.updatedAt} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <div className="toolbar">
              {list.hasNextPage ? (
                <button type="button" className="btn" onClick={() => list.fetchNextPage()} disabled={list.isFetchingNextPage}>
                  {list.isFetchingNextPage ? "Loading…" : "Load more"}
                </button>
              ) : (
                <span className="muted">That is all of them.</span>
              )}
              <span className="muted">
                Showing {items.length.toLocaleString("en-US")} {items.length === 1 ? "instance" : "instances"}
                {/* What the rows are the answer to; while the next search is read they are the last one's. */}
                {search !== undefined && !searching && <> matching “{filters.q.trim()}”</>}
                {live && (pushed === "live" ? <> · live</> : <> · refreshes every {LIVE_MS / 1_000} s</>)}
              </span>
              {!live && (
                <>
                  <span className="muted">Live refresh is paused while older pages are shown.</span>
                  <button
                    type="button"
                    className="btn btn-small"
                    onClick={() => queryClient.resetQueries({ queryKey: trpc.instances.list.infiniteQueryKey(input) })}
                  >
                    Back to newest
                  </button>
                </>
              )}
            </div>
            {/* A failed refresh or next page keeps what is on screen and says so. */}
            {list.error && <QueryError error={list.error} />}
          </>
        )}
      </section>
    </>
  );
}
