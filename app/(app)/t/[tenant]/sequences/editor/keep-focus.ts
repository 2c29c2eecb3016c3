// Deleting a block (or undoing) unmounts the element that had focus, and the browser moves focus
// to the page body, where the editor's shortcuts no longer arrive. After the next paint, focus
// returns to the editor unless it already sits somewhere inside it.
export function keepFocusInside(root: HTMLElement | null): void {
  if (!root || !root.contains(document.activeElement)) return;
  requestAnimationFrame(() => {
    if (root.isConnected && !root.contains(document.activeElement)) root.focus({ preventScroll: true });
  });
}
