"use client";

import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { QueryError } from "../../../_components/query-error";
import { useTRPC } from "../../../_components/trpc";
import type { AppRouter } from "../../../../server/api/root.ts";
import styles from "./resources.module.css";
import { REFRESH_MS } from "./step-slots-card";
import { useLocalTime } from "../../../_components/local-time";

/** One caller's row, as resources.throttled answers it. */
type Caller = inferRouterOutputs<AppRouter>["resources"]["throttled"]["callers"][number];

const KIND: Record<NonNullable<Caller["kind"]>, string> = { api_key: "api key", user: "user" };

/** "1/s, burst 4": the rate and burst the caller was held to. */
export function heldTo(caller: Pick<Caller, "ratePerSec" | "burst">): string | null {
  if (caller.ratePerSec === null) return null;
  const rate = `${caller.ratePerSec.toLocaleString("en-US")}/s`;
  return caller.burst === null ? rate : `${rate}, burst ${caller.burst.toLocaleString("en-US")}`;
}

/**
 * Who got 429s: the API keys and users refused for their request rate in the last 10 minutes
 * (the audit log, which every web process writes), the most recently throttled first, refreshed
 * every 2 s; with the requests this web process refused them in the current minute.
 */
export function ThrottledCard() {
  const trpc = useTRPC();
  const throttled = useQuery({ ...trpc.resources.throttled.queryOptions(), refetchInterval: REFRESH_MS });
  const data = throttled.data;

  return (
    <section className="card" aria-labelledby="throttled-heading">
      <h2 id="throttled-heading">Throttled API callers</h2>
      <p className="muted">
        API keys and signed-in users refused with 429 for their request rate, per tenant they acted for: a token bucket per
        caller and tenant, the tenant&apos;s own rate or the default. Minutes throttled are over the last 10 minutes (the audit
        log&apos;s <code>api.throttled</code> rows, one per caller, tenant and minute); refused this minute counts this web
        process&apos;s refusals only. Refreshed every 2 s.
      </p>
      {throttled.error ? (
        <QueryError error={throttled.error} />
      ) : !data ? (
        <div className="skeleton" aria-busy="true" aria-label="Loading throttled API callers" />
      ) : data.callers.length === 0 ? (
        <p className="empty">No caller was throttled in the last 10 minutes.</p>
      ) : (
        <>
          {data.throttledCallers > data.callers.length && (
            <p className="muted">
              The {data.callers.length} most recently throttled of {data.complete ? "" : "at least "}
              {data.throttledCallers.toLocaleString("en-US")} callers.
            </p>
          )}
          <div className="table-wrap">
            <table className={`table ${styles.liveTable}`} aria-label="Throttled API callers">
              <thead>
                <tr>
                  <th scope="col">Tenant</th>
                  <th scope="col">Caller</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Minutes throttled</th>
                  <th scope="col">Last throttled</th>
                  <th scope="col">Held to</th>
                  <th scope="col">Refused this minute</th>
                </tr>
              </thead>
              <tbody>
                {data.callers.map((c) => <CallerRow key={`${c.tenantId ?? ""} ${c.actor}`} caller={c} />)}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

function CallerRow({ caller }: { caller: Caller }) {
  const say = useLocalTime();
  const held = heldTo(caller);
  return (
    <tr>
      <th scope="row">
        {caller.tenantId === null ? (
          <span className="muted">platform</span>
        ) : (
          <Link prefetch={false} href={`/ops/tenants/${caller.tenantId}`} title={`Limits and activity of ${caller.tenantId}`}><code>{caller.tenantId}</code></Link>
        )}
      </th>
      {/* A key is known by its prefix, as on the settings page. */}
      <td>{caller.kind === "api_key" ? <code title="API key prefix">{caller.actor}…</code> : caller.actor}</td>
      <td>{caller.kind ? KIND[caller.kind] : <span className="muted">—</span>}</td>
      <td>{caller.minutes.toLocaleString("en-US")}</td>
      <td>
        <time dateTime={caller.lastThrottledAt} title={say(caller.lastThrottledAt)}>
          {say(caller.lastThrottledAt, "time")}
        </time>
      </td>
      <td>{held ?? <span className="muted">—</span>}</td>
      <td>
        {caller.refusedThisMinute === null ? <span className="muted">—</span> : <strong>{caller.refusedThisMinute.toLocaleString("en-US")}</strong>}
      </td>
    </tr>
  );
}
