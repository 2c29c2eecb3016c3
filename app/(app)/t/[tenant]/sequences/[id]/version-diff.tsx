"use client";

// Two versions' JSON side by side, changed lines marked on both sides.
import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useTRPC } from "../../../../../_components/trpc";
import { sideBySide } from "./json-diff.ts";

interface Side {
  id: string;
  label: string;
}

export function VersionDiff({ tenantId, left, right }: { tenantId: string; left: Side; right: Side }) {
  const trpc = useTRPC();
  const a = useQuery(trpc.sequences.get.queryOptions({ tenantId, sequenceId: left.id }));
  const b = useQuery(trpc.sequences.get.queryOptions({ tenantId, sequenceId: right.id }));
  const rows = useMemo(() => (a.data && b.data ? sideBySide(a.data.sequence, b.data.sequence) : null), [a.data, b.data]);
  if (a.error ?? b.error) return <p className="alert alert-error">Could not load a version: {(a.error ?? b.error)?.message}</p>;
  if (!rows) return <p className="muted">Loading…</p>;
  const changes = rows.filter((row) => row.kind !== "same").length;
  return (
    <div className="seq-diff" role="region" aria-label={`Diff of ${left.label} and ${right.label}`}>
      <p className="muted">{changes === 0 ? "The two versions are the same." : `${changes} line${changes === 1 ? "" : "s"} differ.`}</p>
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
    </div>
  );
}
