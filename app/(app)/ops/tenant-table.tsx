"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname, useSearchParams } from "next/navigation";
import { useEffect, useState } from "react";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../../server/api/root.ts";
import { useTRPC } from "../../_components/trpc";
import { QueryError } from "../../_components/query-error";
import { lagLabel } from "./fairness/fairness-data";
import styles from "./tenant-table.module.css";
import { firstPageInput, ORDERS, PAGE_SIZE, type Order } from "./tenant-page-input";

type Page = inferRouterOutputs<AppRouter>["ops"]["tenantPage"];
type Row = Page["items"][number];
const LIVE_MS = 10_000;
/** Typing waits this long for the next keystroke before it asks the server. */
const DEBOUNCE_MS = 200;

interface Paging {
  /** The order and search these cursors belong to. */
  key: string;
  before: (string | null)[];
  cursor: string | null;
}

/** `value`, once it has stayed the same for `ms`. */
function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

const LIMIT_NAMES: Record<keyof Row["limits"], string> = {
  claimCap: "claim cap", maxConcurrency: "in flight", maxSteps: "steps", outboundPerHost: "outbound per host",
  apiRatePerSec: "API/s", cronSchedules: "cron schedules", webhookRatePerSec: "webhooks/s", lagObjectiveMs: "lag objective ms",
  retentionDays: "retention days",
};

/**
 * Every tenant, a page of 50 at a time: searched on the server as you type (slug or name prefix,
 * anywhere from three characters), ordered by name, slug, claims or lag of the last hour. The
 * search and the order are in the address, so a reload or a link keeps them.
 */
export function TenantTable() {
  const trpc = useTRPC();
  const pathname = usePathname();
  const params = useSearchParams();
  const [search, setSearch] = useState(() => params.get("q") ?? "");
  const [order, setOrder] = useState<Order>(() => firstPageInput(null, params.get("sort")).order);
  const query = useDebounced(search.trim(), DEBOUNCE_MS);
  // This page's cursor and those of the pages before it (the first page's is null): Previous pops
  // one. Kept for one search and order: another starts again at the first page.
  const key = `${order}\u0000${query}`;
  const [paging, setPaging] = useState<Paging>({ key, before: [], cursor: null });
  const { before: cursors, cursor }: Paging = paging.key === key ? paging : { key, before: [], cursor: null };

  // The address follows the search and the order, written as they change rather than after the
  // debounce: a delayed write could land on a page a link has started opening meanwhile.
  const change = (next: { search?: string; order?: Order }) => {
    const q = (next.search ?? search).trim();
    const o = next.order ?? order;
    if (next.search !== undefined) setSearch(next.search);
    if (next.order !== undefined) setOrder(next.order);
    const address = new URLSearchParams();
    if (q) address.set("q", q);
    if (o !== "name") address.set("sort", o);
    const text = address.toString();
    window.history.replaceState(null, "", text ? `${pathname}?${text}` : pathname);
  };

  const page = useQuery({
    ...trpc.ops.tenantPage.queryOptions({ search: query, order, cursor, limit: PAGE_SIZE }),
    refetchInterval: LIVE_MS,
    // The last page stays on screen (marked busy) while the next search or page loads.
    placeholderData: keepPreviousData,
  });
  const first = cursors.length * PAGE_SIZE + 1;

  return (
    <>
      <form className="filters" role="search" aria-label="Search tenants" onSubmit={(event) => event.preventDefault()}>
        <label>
          Search
          <input
            className={`input ${styles.search}`}
            type="search"
            name="q"
            placeholder="Slug or name, e.g. ac"
            maxLength={200}
            autoComplete="off"
            spellCheck={false}
            value={search}
            onChange={(event) => change({ search: event.target.value })}
            aria-describedby="tenant-search-hint"
          />
        </label>
        <label>
          Order by
          <select className="select" name="sort" value={order} onChange={(event) => change({ order: event.target.value as Order })}>
            {(Object.keys(ORDERS) as Order[]).map((o) => <option key={o} value={o}>{ORDERS[o]}</option>)}
          </select>
        </label>
        <p id="tenant-search-hint" className={`muted ${styles.hint}`}>
          One or two characters match the start of a slug or a name; three or more match anywhere in either.
        </p>
      </form>
      {!page.data && page.error ? (
        <QueryError error={page.error} />
      ) : !page.data ? (
        <div className="skeleton" aria-busy="true" aria-label="Loading tenants" />
      ) : page.data.items.length === 0 ? (
        <p className="empty">
          {query ? <>No tenant’s slug or name {[...query].length >= 3 ? "contains" : "starts with"} “{query}”.</> : (
            <>No tenants yet. <Link prefetch={false} href="/ops/tenants/new">Create one</Link>, or run <code>npm run bulkhead -- tenants create &lt;slug&gt;</code>.</>
          )}
        </p>
      ) : (
        <>
          {page.error && <QueryError error={page.error} />}
          <Table page={page.data} order={order} onOrder={(o) => change({ order: o })} busy={page.isPlaceholderData} />
          <div className="toolbar">
            <button
              type="button"
              className="btn"
              disabled={cursors.length === 0 || page.isPlaceholderData}
              onClick={() => setPaging({ key, before: cursors.slice(0, -1), cursor: cursors.at(-1) ?? null })}
            >
              Previous
            </button>
            <button
              type="button"
              className="btn"
              disabled={!page.data.next || page.isPlaceholderData}
              onClick={() => setPaging({ key, before: [...cursors, cursor], cursor: page.data.next })}
            >
              Next
            </button>
            <span className="muted" role="status">
              {first.toLocaleString("en-US")}–{(first + page.data.items.length - 1).toLocaleString("en-US")} of {page.data.total.toLocaleString("en-US")}{" "}
              {query ? "matching" : page.data.total === 1 ? "tenant" : "tenants"} · figures of the last {page.data.windowMinutes} minutes · refreshes every {LIVE_MS / 1_000} s
            </span>
          </div>
        </>
      )}
    </>
  );
}

function SortHeader({ label, value, order, onOrder }: { label: string; value: Order; order: Order; onOrder: (order: Order) => void }) {
  const active = order === value;
  // Names and slugs read A to Z; claims and lag the highest first.
  const direction = value === "name" || value === "slug" ? "ascending" : "descending";
  return (
    <th scope="col" aria-sort={active ? direction : "none"}>
      <button type="button" className={styles.sort} onClick={() => onOrder(value)} title={`Order by ${ORDERS[value].toLowerCase()}`}>
        {label}
        <span aria-hidden="true" className={active ? styles.arrowOn : styles.arrow}>{direction === "ascending" ? "↑" : "↓"}</span>
      </button>
    </th>
  );
}

function Table({ page, order, onOrder, busy }: { page: Page; order: Order; onOrder: (order: Order) => void; busy: boolean }) {
  return (
    <div className="table-wrap">
      <table className={`table ${styles.tenants}`} aria-label="Tenants" aria-busy={busy}>
        <thead>
          <tr>
            <SortHeader label="Tenant" value="name" order={order} onOrder={onOrder} />
            <th scope="col">Placement</th>
            <SortHeader label="Claims" value="claims" order={order} onOrder={onOrder} />
            <SortHeader label="Lag p99" value="lag" order={order} onOrder={onOrder} />
            <th scope="col">Breakers</th>
            <th scope="col">Limits</th>
            <th scope="col">At a limit</th>
          </tr>
        </thead>
        <tbody>
          {page.items.map((t) => <TenantRow key={t.id} tenant={t} defaults={page.defaults} />)}
        </tbody>
      </table>
    </div>
  );
}

function TenantRow({ tenant: t, defaults }: { tenant: Row; defaults: Page["defaults"] }) {
  const own = (Object.keys(LIMIT_NAMES) as (keyof Row["limits"])[]).filter((key) => t.limits[key] !== null);
  const unknown = !t.figures && <span className="muted" title="Its backend is not served by this web process">?</span>;
  return (
    <tr data-tenant={t.id}>
      <td className={styles.tenant}>
        <Link href={`/ops/tenants/${t.id}`} prefetch={false} className={styles.name}>{t.name}</Link>
        <code className={styles.slug}>{t.id}</code>
      </td>
      <td>
        {t.backendId ? <span className="badge badge-accent">{t.backendId}</span> : <span className="badge">unplaced</span>}{" "}
        <span className="muted">epoch {t.epoch ?? "–"}</span>
        {t.quiesced && (
          <>
            {" "}
            <span className="badge badge-warn" title="API writes pause and schedulers skip the tenant while a move runs">quiesced · moving</span>
          </>
        )}
      </td>
      <td className={styles.number}>{unknown || t.claims.toLocaleString("en-US")}</td>
      <td className={styles.number}>{unknown || lagLabel(t.lagP99)}</td>
      <td>
        {t.openBreakers === null ? unknown : t.openBreakers === 0 ? <span className="muted">none open</span> : (
          <Link href={`/ops/breakers?tenant=${encodeURIComponent(t.id)}`} prefetch={false} className="badge badge-danger">
            {t.openBreakers} open
          </Link>
        )}
      </td>
      <td className={styles.wrap}>
        {own.length === 0 ? <span className="muted">defaults</span> : own.map((key) => (
          <span key={key} className={styles.limit} title={`Its own ${LIMIT_NAMES[key]}; the default is ${defaults[key] === 0 && key === "claimCap" ? "no cap" : defaults[key].toLocaleString("en-US")}`}>
            {LIMIT_NAMES[key]} {t.limits[key]!.toLocaleString("en-US")}
          </span>
        ))}
      </td>
      <td className={styles.wrap}>
        {t.atLimit.length === 0 ? <span className="muted">–</span> : t.atLimit.map((l) => (
          <span key={l.resource} className="badge badge-warn" title={`${l.title}: ${l.detail} in the last hour`}>{l.label}</span>
        ))}
      </td>
    </tr>
  );
}
