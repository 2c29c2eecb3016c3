"use client";

// One clock for every live duration on the page ("running for 12 s", the waterfall's running
// bars): a single 1 s interval while anything is subscribed, none otherwise. Read through
// useSyncExternalStore so render stays pure, and the server (and hydration) render without a
// "now" at all: callers fall back to the latest time the data knows.
import { useSyncExternalStore } from "react";

const TICK_MS = 1_000;
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;
let now = 0;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (timer === undefined) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const notify of listeners) notify();
    }, TICK_MS);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

const noSubscription = () => () => {};
const snapshot = () => (timer === undefined ? null : now);
const serverSnapshot = () => null;

/** Milliseconds since the epoch, updated every second while `live`; null on the server, during hydration and when not live. */
export function useNow(live: boolean): number | null {
  return useSyncExternalStore(live ? subscribe : noSubscription, live ? snapshot : serverSnapshot, serverSnapshot);
}
