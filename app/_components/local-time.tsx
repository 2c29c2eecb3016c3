"use client";

// A time in the reader's own zone and locale. The server (and hydration) cannot know them, so
// until the page is hydrated it says the time in UTC; hydration then finds what the server drew,
// and the next render says it the reader's way.
import { useSyncExternalStore } from "react";

const noSubscription = () => () => {};

/** False on the server and while hydrating, true from the render after. */
export function useHydrated(): boolean {
  return useSyncExternalStore(noSubscription, () => true, () => false);
}

type Shown = "datetime" | "date" | "time";

/** The instant on the reader's clock, as the reader's locale says it. */
export function localTime(iso: string | number, shown: Shown = "datetime"): string {
  const date = new Date(iso);
  if (shown === "date") return date.toLocaleDateString();
  if (shown === "time") return date.toLocaleTimeString();
  return date.toLocaleString();
}

/** The same in UTC and a fixed form, as the server draws it: "2026-12-02 18:50:07 UTC". */
export function utcTime(iso: string | number, shown: Shown = "datetime"): string {
  const [day, rest] = new Date(iso).toISOString().split("T") as [string, string];
  if (shown === "date") return day;
  const clock = `${rest.slice(0, 8)} UTC`;
  return shown === "time" ? clock : `${day} ${clock}`;
}

/** `localTime` once hydrated, `utcTime` before: for text drawn on the server too. */
export function useLocalTime(): (iso: string | number, shown?: Shown) => string {
  const hydrated = useHydrated();
  return (iso, shown) => (hydrated ? localTime(iso, shown) : utcTime(iso, shown));
}

/** A `<time>` of the instant, said as `useLocalTime` says it. */
export function LocalTime({ iso, shown = "datetime" }: { iso: string | number; shown?: Shown }) {
  const say = useLocalTime();
  return <time dateTime={new Date(iso).toISOString()}>{say(iso, shown)}</time>;
}
