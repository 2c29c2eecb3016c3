"use client";

// Asks before leaving a page with unsaved work: the browser's own prompt on reload, close and
// links to other sites (beforeunload), and a confirm for in-app links, which the App Router
// follows without unloading the page. Clicks are caught on the way down, before next/link's.
import { useEffect } from "react";

export const LEAVE_QUESTION = "You have unsaved changes. Leave this page? Your draft is kept and restored when you come back.";

/** Whether a click on `anchor` would take the app to another page. */
function leavesPage(event: MouseEvent, anchor: HTMLAnchorElement): boolean {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return false;
  if ((anchor.target && anchor.target !== "_self") || anchor.hasAttribute("download")) return false;
  const to = new URL(anchor.href, window.location.href);
  // Another origin unloads the page: beforeunload asks then.
  if (to.origin !== window.location.origin) return false;
  return to.pathname !== window.location.pathname || to.search !== window.location.search;
}

export function useUnsavedGuard(dirty: boolean) {
  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      event.returnValue = "";
    };
    const onClick = (event: MouseEvent) => {
      const anchor = event.target instanceof Element ? event.target.closest("a[href]") : null;
      if (!(anchor instanceof HTMLAnchorElement) || !leavesPage(event, anchor)) return;
      if (window.confirm(LEAVE_QUESTION)) return;
      event.preventDefault();
      event.stopPropagation();
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    document.addEventListener("click", onClick, true);
    return () => {
      window.removeEventListener("beforeunload", onBeforeUnload);
      document.removeEventListener("click", onClick, true);
    };
  }, [dirty]);
}
