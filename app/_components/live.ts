"use client";

import { useEffect, useRef, useState } from "react";

export type LiveStatus = "connecting" | "live" | "ended" | "unavailable";

/**
 * Follows one instance by server push (/api/live/…, Server-Sent Events): `onChange` runs on each
 * state change, each new output and any other progress of the run, so the page refetches then instead of on a timer. EventSource
 * reconnects by itself, resuming after the last output it got (Last-Event-ID). "unavailable"
 * (the stream budget is used up, or the connection keeps failing) tells the page to poll instead.
 */
export function useInstanceStream(tenantId: string, instanceId: string, enabled: boolean, onChange: () => void): LiveStatus {
  const [status, setStatus] = useState<LiveStatus>("connecting");
  const latest = useRef(onChange);
  useEffect(() => {
    latest.current = onChange;
  }, [onChange]);

  useEffect(() => {
    if (!enabled) return;
    // 250 ms: a pause or a finished step shows within a second (G.2 applies signals within 250 ms).
    const source = new EventSource(`/api/live/t/${encodeURIComponent(tenantId)}/instances/${encodeURIComponent(instanceId)}?poll_ms=250`);
    let failures = 0;
    const changed = () => {
      failures = 0;
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
    source.addEventListener("error", () => {
      // Closed for good (a 404 or 503 answer), or failing again and again: polling takes over.
      failures += 1;
      if (source.readyState === EventSource.CLOSED || failures >= 3) {
        source.close();
        setStatus("unavailable");
      } else setStatus("connecting");
    });
    return () => source.close();
  }, [tenantId, instanceId, enabled]);

  return enabled ? status : "ended";
}
