"use client";

// The version list of a sequence's name: open, deprecate and delete each version (delete is
// refused while active instances use it), and compare two versions side by side.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { ConfirmButton } from "../../../../../_components/confirm-button";
import { useTRPC } from "../../../../../_components/trpc";
import { VersionDiff } from "./version-diff";
import { LocalTime } from "../../../../../_components/local-time";

export function Versions({ tenantId, sequenceId }: { tenantId: string; sequenceId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const ids = { left: useId(), right: useId() };
  const versions = useQuery(trpc.sequences.versions.queryOptions({ tenantId, sequenceId }));
  const [picked, setPicked] = useState<{ left?: string; right?: string }>({});
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.sequences.versions.queryKey() });
  const deprecate = useMutation(trpc.sequences.deprecate.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(
    trpc.sequences.remove.mutationOptions({
      onSuccess: (_, { sequenceId: removed }) => (removed === sequenceId ? router.push(`/t/${tenantId}/sequences`) : refresh()),
    }),
  );

  const list = versions.data ?? [];
  // By default: the version before this one against this one.
  const at = list.findIndex((v) => v.id === sequenceId);
  const left = picked.left ?? list[at + 1]?.id ?? list[at]?.id;
  const right = picked.right ?? sequenceId;
  const error = deprecate.error ?? remove.error;
  const label = (id: string | undefined) => `v${list.find((v) => v.id === id)?.version ?? "?"}`;

  return (
    <section className="card seq-versions" aria-label="Versions">
      <h2 className="seq-panel-title">Versions</h2>
      {error && (
        <p className="alert alert-error" role="alert">
          {error.message}
        </p>
      )}
      <div className="table-wrap">
        <table className="table">
          <thead>
            <tr>
              <th>Version</th>
              <th>Status</th>
              <th>Created</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((v) => (
              <tr key={v.id} aria-current={v.id === sequenceId ? "page" : undefined}>
                <td>
                  {v.id === sequenceId ? <strong>v{v.version}</strong> : <Link prefetch={false} href={`/t/${tenantId}/sequences/${v.id}`}>v{v.version}</Link>}
                  {v.deprecated && <span className="badge badge-warn"> deprecated</span>}
                </td>
                <td>{v.status}</td>
                <td><LocalTime iso={v.createdAt} /></td>
                <td className="toolbar">
                  <button
                    type="button"
                    className="btn btn-small"
                    disabled={v.deprecated || deprecate.isPending}
                    aria-label={`Deprecate v${v.version}`}
                    onClick={() => deprecate.mutate({ tenantId, sequenceId: v.id })}
                  >
                    Deprecate
                  </button>
                  <ConfirmButton
                    label="Delete"
                    accessibleLabel={`Delete v${v.version}`}
                    question={`Delete v${v.version} and its finished instances?`}
                    pending={remove.isPending}
                    onConfirm={() => remove.mutate({ tenantId, sequenceId: v.id })}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.length > 1 && (
        <>
          <h3 className="seq-panel-title">Compare</h3>
          <div className="form-row">
            <div className="field">
              <label htmlFor={ids.left}>Left</label>
              <select id={ids.left} className="select" value={left} onChange={(e) => setPicked((p) => ({ ...p, left: e.target.value }))}>
                {list.map((v) => (
                  <option key={v.id} value={v.id}>
                    v{v.version}
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor={ids.right}>Right</label>
              <select id={ids.right} className="select" value={right} onChange={(e) => setPicked((p) => ({ ...p, right: e.target.value }))}>
                {list.map((v) => (
                  <option key={v.id} value={v.id}>
                    v{v.version}
                  </option>
                ))}
              </select>
            </div>
          </div>
          {left && right && <VersionDiff tenantId={tenantId} left={{ id: left, label: label(left) }} right={{ id: right, label: label(right) }} />}
        </>
      )}
    </section>
  );
}
