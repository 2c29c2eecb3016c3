"use client";

// Two versions side by side, as JSON (changed lines marked on both sides) or on the graph
// (blocks marked added, removed or changed).
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { useTRPC } from "../../../../../_components/trpc";
import { blockChanges } from "./block-changes.ts";
import { sideBySide } from "./json-diff.ts";
import { VersionGraph } from "./version-graph";

/** A version's top-level blocks (the wire JSON's `blocks`). */
const blocksOf = (sequence: object): unknown => (sequence as { blocks?: unknown }).blocks;

interface Side {
  id: string;
  label: string;
}

export function VersionDiff({ tenantId, left, right }: { tenantId: string; left: Side; right: Side }) {
  const trpc = useTRPC();
  const a = useQuery(trpc.sequences.get.queryOptions({ tenantId, sequenceId: left.id }));
  const b = useQuery(trpc.sequences.get.queryOptions({ tenantId, sequenceId: right.id }));
  const [view, setView] = useState<"json" | "graph">("json");
  const rows = useMemo(() => (a.data && b.data ? sideBySide(a.data.sequence, b.data.sequence) : null), [a.data, b.data]);
  const changes = useMemo(() => (a.data && b.data ? blockChanges(blocksOf(a.data.sequence), blocksOf(b.data.sequence)) : null), [a.data, b.data]);
  if (a.error ?? b.error) return <p className="alert alert-error">Could not load a version: {(a.error ?? b.error)?.message}</p>;
  if (!rows || !changes || !a.data || !b.data) return <p className="muted">Loading…</p>;
  const lines = rows.filter((row) => row.kind !== "same").length;
  return (
    <div className="seq-diff" role="region" aria-label={`Diff of ${left.label} and ${right.label}`}>
      <div className="toolbar">
        <div role="tablist" aria-label="Diff views" className="seq-tabs">
          <button type="button" role="tab" aria-selected={view === "json"} className="btn btn-small" onClick={() => setView("json")}>
            JSON
          </button>
          <button type="button" role="tab" aria-selected={view === "graph"} className="btn btn-small" onClick={() => setView("graph")}>
            Graph
          </button>
        </div>
        <p className="muted">{lines === 0 ? "The two versions are the same." : `${lines} line${lines === 1 ? "" : "s"} differ.`}</p>
      </div>
      {view === "graph" ? (
        <div className="seq-diff-sides">
          <VersionGraph blocks={blocksOf(a.data.sequence)} changes={changes.left} label={`Left graph: ${left.label}`} />
          <VersionGraph blocks={blocksOf(b.data.sequence)} changes={changes.right} label={`Right graph: ${right.label}`} />
        </div>
      ) : (
        <div className="seq-diff-sides">
          {(["left", "right"] as const).map((side) => (
            <pre key={side} className="seq-diff-side" aria-label={`${side === "left" ? "Left" : "Right"}: ${side === "left" ? left.label : right.label}`}>
              {rows.map((row, index) => {
                const line = row[side];
                const mark = row.kind === "same" ? "" : line === null ? " seq-diff-gap" : side === "left" ? " seq-diff-del" : " seq-diff-add";
                return (
                  <span key={index} className={`seq-diff-line${mark}`}>
                    {line ?? " "}
                    {"\n"}
                  </span>
                );
              })}
            </pre>
          ))}
        </div>
      )}
    </div>
  );
}
