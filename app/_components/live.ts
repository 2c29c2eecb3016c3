"use client";

import { useQueryClient, type QueryKey } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";

export type LiveStatus = "connecting" | "live" | "ended" | "unavailable";

/** The latest `callback`, for an effect that must not restart when the callback changes. */
function useLatest(callback: () => void): { current: () => void } {
  const latest = useRef(callback);
  useEffect(() => {
    latest.current = callback;
  }, [callback]);
  return latest;
}

/**
 * An EventSource's errors: closed for good (a 404, 503 or 429 answer) or failing again and again,
 * it is given up ("unavailable": polling takes over); otherwise it reconnects by itself.
 * `onEvent` resets the count: a stream that delivers is healthy.
 */
function failureCounter(source: EventSource, setStatus: (status: LiveStatus) => void): { onEvent(): void } {
  let failures = 0;
  source.addEventListener("error", () => {
    failures += 1;
    if (source.readyState === EventSource.CLOSED || failures >= 3) {
      source.close();
      setStatus("unavailable");
    } else setStatus("connecting");
  });
  return { onEvent: () => void (failures = 0) };
}

/**
 * Follows one instance by server push (/api/live/…, Server-Sent Events): `onChange` runs on each
 * state change, each new output and any other progress of the run, so the page refetches then instead of on a timer. EventSource
 * reconnects by itself, resuming after the last output it got (Last-Event-ID). "unavailable"
 * (the stream budget is used up, or the connection keeps failing) tells the page to poll instead.
 */
export function useInstanceStream(tenantId: string, instanceId: string, enabled: boolean, onChange: () => void): LiveStatus {
  const [status, setStatus] = useState<LiveStatus>("connecting");
  const latest = useLatest(onChange);

  useEffect(() => {
    if (!enabled) return;
    // 250 ms: a pause or a finished step shows within a second (G.2 applies signals within 250 ms).
    const source = new EventSource(`/api/live/t/${encodeURIComponent(tenantId)}/instances/${encodeURIComponent(instanceId)}?poll_ms=250`);
    const failures = failureCounter(source, setStatus);
    const changed = () => {
      failures.onEvent();
      setStatus("live");
      latest.current();
    };
    source.addEventListener("open", () => setStatus("live"));
    source.addEventListener("state", changed);
    source.addEventListener("output", changed);
    source.addEventListener("progress", changed);
    source.addEventListener("done", () => {
      latest.current();
      setStatus("ended");
      source.close();
    });
    return () => source.close();
  }, [tenantId, instanceId, enabled, latest]);

  return enabled ? status : "ended";
}

interface Subscriber {
  onChange(): void;
  onStatus(status: LiveStatus): void;
}

/** One change-notice stream per tenant, shared by every list on the page. */
const feeds = new Map<string, { source: EventSource; subscribers: Set<Subscriber>; status: LiveStatus }>();

function subscribeToChanges(tenantId: string, subscriber: Subscriber): () => void {
  let feed = feeds.get(tenantId);
  if (!feed) {
    const source = new EventSource(`/api/live/t/${encodeURIComponent(tenantId)}/changes`);
    const created = { source, subscribers: new Set<Subscriber>(), status: "connecting" as LiveStatus };
    const setStatus = (status: LiveStatus) => {
      created.status = status;
      for (const s of created.subscribers) s.onStatus(status);
    };
    const failures = failureCounter(source, setStatus);
    source.addEventListener("open", () => setStatus("live"));
    source.addEventListener("changed", () => {
      failures.onEvent();
      for (const s of created.subscribers) s.onChange();
    });
    feeds.set(tenantId, (feed = created));
  }
  feed.subscribers.add(subscriber);
  subscriber.onStatus(feed.status);
  const joined = feed;
  return () => {
    joined.subscribers.delete(subscriber);
    if (joined.subscribers.size === 0) {
      joined.source.close();
      if (feeds.get(tenantId) === joined) feeds.delete(tenantId);
    }
  };
}

/** At most one refetch per this long, however fast the tenant's runs change. */
const CHANGE_THROTTLE_MS = 500;

/**
 * Refetches a list by server push: `onChange` runs when any of the tenant's instances changes
 * state (the change feed, at most every 500 ms), so lists need no timer. "unavailable" tells
 * the page to poll instead (the stream budget is used up, or the connection keeps failing).
 */
export function useTenantChanges(tenantId: string, onChange: () => void): LiveStatus {
  const [status, setStatus] = useState<LiveStatus>("connecting");
  const latest = useLatest(onChange);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let last = 0;
    const fire = () => {
      timer = undefined;
      last = Date.now();
      latest.current();
    };
    const unsubscribe = subscribeToChanges(tenantId, {
      onChange() {
        if (timer) return;
        const wait = last + CHANGE_THROTTLE_MS - Date.now();
        if (wait <= 0) fire();
        else timer = setTimeout(fire, wait);
      },
      onStatus: setStatus,
    });
    return () => {
      clearTimeout(timer);
      unsubscribe();
    };
  }, [tenantId, latest]);
  return status;
}

/** With server push, a slow poll only in case a notice was missed. */
export const BACKSTOP_MS = 60_000;

/**
 * Keeps the queries under `queryKey` fresh by the tenant's change notices; the refetch interval
 * to give them: `pollMs` while there is no push, a slow backstop while there is.
 */
export function useLiveRefresh(tenantId: string, queryKey: QueryKey, pollMs: number): number {
  const queryClient = useQueryClient();
  const status = useTenantChanges(tenantId, () => void queryClient.invalidateQueries({ queryKey }));
  return status === "live" ? BACKSTOP_MS : pollMs;
}
