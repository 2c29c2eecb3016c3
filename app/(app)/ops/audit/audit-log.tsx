"use client";

import { keepPreviousData, useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { usePathname, useSearchParams } from "next/navigation";
import { useDeferredValue, useState } from "react";
import { QueryError } from "../../../_components/query-error";
import { useTRPC } from "../../../_components/trpc";
import { AuditEntries } from "./audit-entries";

const PAGE_SIZE = 50;
const TENANT_SUGGESTIONS = 20;
const LIVE_MS = 10_000;
/** Suggestions for the action filter, which matches prefixes. */
const ACTION_PREFIXES = [
  "tenant.", "tenant.move.", "placement.", "member.", "user.", "limits.", "budget.", "rate_limit.", "breaker.", "api_key.", "trigger.", "instance.",
];

interface Filters {
  tenant: string;
  action: string;
  actor: string;
}

/** The filters in the address too, so a reload, a shared link or a tenant page's link keeps them. */
function writeFilters(filters: Filters): string {
  const params = new URLSearchParams();
  if (filters.tenant) params.set("tenant", filters.tenant);
  if (filters.action) params.set("action", filters.action);
  if (filters.actor) params.set("actor", filters.actor);
  return params.toString();
}

export function AuditLog() {
  const trpc = useTRPC();
  const pathname = usePathname();
  const params = useSearchParams();
  const [filters, setFiltersState] = useState<Filters>(() => ({
    tenant: params.get("tenant") ?? "",
    action: params.get("action") ?? "",
    actor: params.get("actor") ?? "",
  }));
  const setFilters = (next: Partial<Filters>) => {
    const all = { ...filters, ...next };
    setFiltersState(all);
    const query = writeFilters(all);
    window.history.replaceState(null, "", query ? `${pathname}?${query}` : pathname);
  };
  // Typing stays responsive; the query follows a moment later.
  const deferred = useDeferredValue(filters);
  const filtered = Boolean(filters.tenant || filters.action || filters.actor);

  // The tenant is typed, with the first tenants whose id or name starts with it as suggestions
  // (searched on the server: a select of every tenant was 10,000 options); the filter applies
  // once the text is a tenant's id.
  const typedTenant = deferred.tenant.trim();
  const tenants = useQuery(trpc.ops.tenantPage.queryOptions({ search: typedTenant, order: "slug", limit: TENANT_SUGGESTIONS }, { placeholderData: keepPreviousData }));
  const suggestions = tenants.data?.items ?? [];
  const tenantKnown = typedTenant !== "" && !tenants.isPlaceholderData && suggestions.some((t) => t.id === typedTenant);
  const tenantUnknown = typedTenant !== "" && tenants.isSuccess && !tenants.isPlaceholderData && !tenantKnown;

  const list = useInfiniteQuery(
    trpc.ops.audit.list.infiniteQueryOptions(
      {
        tenantId: tenantKnown ? typedTenant : undefined,
        action: deferred.action.trim() || undefined,
        actor: deferred.actor.trim() || undefined,
        limit: PAGE_SIZE,
      },
      {
        getNextPageParam: (last) => last.next,
        // Only the first page follows along: refreshing older pages would shift rows under the reader.
        refetchInterval: (query) => ((query.state.data?.pages.length ?? 1) <= 1 ? LIVE_MS : false),
        placeholderData: keepPreviousData,
      },
    ),
  );
  const items = list.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <>
      <section className="card" aria-labelledby="audit-filters-heading">
        <h2 id="audit-filters-heading">Filters</h2>
        <form className="filters" role="search" aria-label="Filter the audit log" onSubmit={(event) => event.preventDefault()}>
          <label>
            Tenant
            <input
              className="input"
              name="tenant"
              type="search"
              list="audit-tenants"
              placeholder="id, e.g. acme"
              maxLength={64}
              autoComplete="off"
              spellCheck={false}
              value={filters.tenant}
              onChange={(event) => setFilters({ tenant: event.target.value })}
            />
            <datalist id="audit-tenants">
              {suggestions.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}
            </datalist>
          </label>
          <label>
            Action
            <input
              className="input"
              name="action"
              type="search"
              list="audit-action-prefixes"
              placeholder="prefix, e.g. breaker."
              maxLength={64}
              autoComplete="off"
              spellCheck={false}
              value={filters.action}
              onChange={(event) => setFilters({ action: event.target.value })}
            />
            <datalist id="audit-action-prefixes">
              {ACTION_PREFIXES.map((prefix) => <option key={prefix} value={prefix} />)}
            </datalist>
          </label>
          <label>
            Actor
            <input
              className="input"
              name="actor"
              type="search"
              placeholder="e.g. @acme.test"
              maxLength={320}
              autoComplete="off"
              spellCheck={false}
              value={filters.actor}
              onChange={(event) => setFilters({ actor: event.target.value })}
            />
          </label>
          <button type="button" className="btn" onClick={() => setFilters({ tenant: "", action: "", actor: "" })} disabled={!filtered}>
            Clear filters
          </button>
        </form>
        {tenants.error && <p className="field-error">Could not load the tenants: {tenants.error.message}</p>}
        {tenantUnknown && <p className="field-error">No tenant has the id “{typedTenant}”: the entries are not filtered by tenant.</p>}
      </section>

      <section className="card" aria-labelledby="audit-heading">
        <h2 id="audit-heading">Entries</h2>
        {!list.data && list.error ? (
          <QueryError error={list.error} />
        ) : !list.data ? (
          <div className="skeleton" aria-busy="true" aria-label="Loading the audit log" />
        ) : items.length === 0 ? (
          <p className="empty">{filtered ? "No entries match these filters." : "Nothing has been recorded yet."}</p>
        ) : (
          <>
            {list.error && <QueryError error={list.error} />}
            <AuditEntries label="Audit log" entries={items} busy={list.isPlaceholderData} />
            <div className="toolbar">
              {list.hasNextPage ? (
                <button type="button" className="btn" onClick={() => list.fetchNextPage()} disabled={list.isFetchingNextPage}>
                  {list.isFetchingNextPage ? "Loading…" : "Load more"}
                </button>
              ) : (
                <span className="muted">That is all of them.</span>
              )}
              <span className="muted">
                Showing {items.length.toLocaleString("en-US")} {items.length === 1 ? "entry" : "entries"}, newest first
                {list.data.pages.length <= 1 && <> · refreshes every {LIVE_MS / 1_000} s</>}
              </span>
            </div>
          </>
        )}
      </section>
    </>
  );
}
