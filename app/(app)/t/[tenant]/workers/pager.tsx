"use client";

/** Previous / next for an offset-paged table: the server reads one page, one more row telling whether there is another. */
export function Pager({
  label, offset, pageSize, shown, hasMore, busy, onOffset,
}: {
  label: string;
  offset: number;
  pageSize: number;
  shown: number;
  hasMore: boolean;
  busy: boolean;
  onOffset: (offset: number) => void;
}) {
  if (offset === 0 && !hasMore) return null;
  return (
    <nav className="toolbar" aria-label={`${label} pages`}>
      <button type="button" className="btn btn-small" disabled={offset === 0 || busy} onClick={() => onOffset(Math.max(0, offset - pageSize))}>
        Previous
      </button>
      <span className="muted">
        {shown === 0 ? "none" : `${(offset + 1).toLocaleString("en-US")}–${(offset + shown).toLocaleString("en-US")}`}
      </span>
      <button type="button" className="btn btn-small" disabled={!hasMore || busy} onClick={() => onOffset(offset + pageSize)}>
        Next
      </button>
    </nav>
  );
}
