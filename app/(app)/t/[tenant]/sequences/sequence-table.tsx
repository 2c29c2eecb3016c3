"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Fragment, useState } from "react";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { RunForm } from "./editor/run-form";

const COLUMNS = 5;

/**
 * One row per name (and namespace): its versions, newest first, each linking to the editor, and
 * Run, which opens the editor's run form for the latest version under the row.
 */
export function SequenceTable({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const sequences = useQuery(trpc.sequences.list.queryOptions({ tenantId }));
  /** The sequence whose run form is open. */
  const [running, setRunning] = useState<string | null>(null);
  if (sequences.error) return <QueryError error={sequences.error} />;
  if (!sequences.data) return <div className="skeleton" aria-busy="true" aria-label="Loading sequences" />;
  if (sequences.data.length === 0) return <p className="empty">No sequences yet.</p>;
  const groups = new Map<string, typeof sequences.data>();
  for (const s of sequences.data) {
    const key = JSON.stringify([s.namespace, s.name]);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  const rows = [...groups.values()].map((versions) => [...versions].sort((a, b) => b.version - a.version));
  return (
    <div className="table-wrap">
      <table className="table table-stack">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Namespace</th>
            <th scope="col">Versions</th>
            <th scope="col">Status (latest)</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((versions) => {
            const latest = versions[0]!;
            const open = running === latest.id;
            return (
              <Fragment key={latest.id}>
                <tr>
                  <td>{latest.name}</td>
                  <td>{latest.namespace}</td>
                  <td>
                    {versions.map((v, index) => (
                      <span key={v.id}>
                        {index > 0 && ", "}
                        <Link prefetch={false} href={`/t/${tenantId}/sequences/${v.id}`} aria-label={`${latest.name} version ${v.version}`}>
                          v{v.version}
                        </Link>
                      </span>
                    ))}
                  </td>
                  <td>
                    <span className="badge">{latest.status}</span> {latest.deprecated && <span className="badge">deprecated</span>}
                  </td>
                  <td className="cell-actions">
                    <button
                      type="button" className="btn btn-small" aria-label={`Run ${latest.name}`} aria-expanded={open}
                      aria-controls={open ? runRowId(latest.id) : undefined} onClick={() => setRunning(open ? null : latest.id)}
                    >
                      Run
                    </button>{" "}
                    <Link prefetch={false} className="btn btn-small" href={`/t/${tenantId}/sequences/${latest.id}`} aria-label={`Edit ${latest.name}`}>
                      Edit
                    </Link>
                  </td>
                </tr>
                {open && <RunRow tenantId={tenantId} sequenceId={latest.id} name={latest.name} />}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

const runRowId = (sequenceId: string) => `run-${sequenceId}`;

/** The run form of one version, as its editor page shows it: its input schema is read from the version itself. */
function RunRow({ tenantId, sequenceId, name }: { tenantId: string; sequenceId: string; name: string }) {
  const trpc = useTRPC();
  const found = useQuery(trpc.sequences.get.queryOptions({ tenantId, sequenceId }));
  const sequence = found.data?.sequence as { version?: unknown; input_schema?: unknown } | undefined;
  return (
    <tr id={runRowId(sequenceId)}>
      <td className="cell-panel" colSpan={COLUMNS}>
        <section className="seq-run" aria-label={`Run ${name}`}>
          {found.error ? (
            <QueryError error={found.error} />
          ) : !sequence ? (
            <div className="skeleton" aria-busy="true" aria-label={`Loading ${name}`} />
          ) : (
            <RunForm tenantId={tenantId} sequenceId={sequenceId} version={sequence.version} inputSchema={sequence.input_schema} />
          )}
        </section>
      </td>
    </tr>
  );
}
