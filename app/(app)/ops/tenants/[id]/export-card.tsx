"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../../../../server/api/root.ts";
import { ChangeError } from "../../../../_components/confirm-button";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import styles from "./export-card.module.css";
import { LocalTime } from "../../../../_components/local-time";

type Job = inferRouterOutputs<AppRouter>["ops"]["exports"]["list"][number];

const STATUS_BADGE: Record<Job["status"], string> = {
  running: "badge badge-accent", done: "badge badge-ok", failed: "badge badge-danger", interrupted: "badge badge-warn",
};

const formatBytes = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

/**
 * "Export data" on an operator's tenant page: starts an export that this web server runs in the
 * background, follows its rows per file (refetched every second while it runs), then offers each
 * file and the manifest for download. Earlier exports are listed below the latest.
 */
export function ExportCard({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const jobs = useQuery({
    ...trpc.ops.exports.list.queryOptions({ tenantId }),
    refetchInterval: (query) => (query.state.data?.some((j) => j.status === "running") ? 1_000 : false),
  });
  const start = useMutation(
    trpc.ops.exports.start.mutationOptions({ onSettled: () => queryClient.invalidateQueries(trpc.ops.exports.list.pathFilter()) }),
  );
  const running = jobs.data?.some((j) => j.status === "running") ?? false;
  const [latest, ...earlier] = jobs.data ?? [];

  let body;
  if (jobs.error) body = <QueryError error={jobs.error} />;
  else if (!jobs.data) body = <div className="skeleton" aria-busy="true" aria-label="Loading exports" />;
  else if (!latest) body = <p className="empty">No exports of this tenant yet.</p>;
  else {
    body = (
      <>
        <LatestExport job={latest} />
        {earlier.length > 0 && (
          <details className={styles.earlier}>
            <summary>Earlier exports ({earlier.length})</summary>
            <ul className={styles.earlierList}>
              {earlier.map((job) => (
                <li key={job.id}>
                  <span className={STATUS_BADGE[job.status]}>{job.status}</span> <LocalTime iso={job.startedAt} /> by {job.requestedBy}
                  {job.status === "done" && (
                    <> · <a href={job.downloads.find((d) => d.name === "manifest.json")!.href} download>manifest</a></>
                  )}
                </li>
              ))}
            </ul>
          </details>
        )}
      </>
    );
  }

  return (
    <section className="card" aria-labelledby="export-heading">
      <h2 id="export-heading">Export data</h2>
      <p className="muted">
        Every sequence version, instance, output, signal, schedule and trigger of the tenant, and its credentials&apos; metadata (never a
        value or secret), as NDJSON files with a manifest of row counts and SHA-256 checksums, read from one snapshot of its backend.
      </p>
      <ChangeError what="start the export" error={start.error} />
      <div className="toolbar">
        <button
          type="button"
          className="btn btn-primary"
          // Not held back by a list that failed to load: the server refuses a second running export itself.
          disabled={start.isPending || running}
          onClick={() => start.mutate({ tenantId })}
        >
          {start.isPending ? "Starting…" : running ? "Exporting…" : "Export data"}
        </button>
        {running && <span className="muted">One export at a time per tenant.</span>}
      </div>
      {body}
    </section>
  );
}

function LatestExport({ job }: { job: Job }) {
  const total = job.files.reduce((n, f) => n + f.rows, 0);
  const manifest = job.downloads.find((d) => d.name === "manifest.json");
  const hrefOf = new Map(job.downloads.map((d) => [d.name, d.href]));
  return (
    <div className={styles.latest}>
      <p role="status" aria-live="polite" className={styles.summary}>
        <span className={STATUS_BADGE[job.status]}>{job.status}</span>{" "}
        {job.status === "running"
          ? `${total.toLocaleString("en-US")} rows so far`
          : job.status === "done"
            ? <>{total.toLocaleString("en-US")} rows from {job.backend ?? "its backend"}, finished <LocalTime iso={job.finishedAt!} /></>
            : job.error}
        <span className="muted"> · started <LocalTime iso={job.startedAt} /> by {job.requestedBy}</span>
      </p>
      {job.status === "interrupted" && <p className="muted">The web server running it stopped. Start it again with “Export data”.</p>}
      {job.status === "running" && <progress className={styles.progress} aria-label="Export under way" />}
      {job.files.length > 0 && (
        <table className={`table ${styles.files}`} aria-label={job.status === "done" ? "Exported files" : "Rows exported so far"}>
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col" className={styles.number}>Rows</th>
              {job.status === "done" && <th scope="col" className={styles.number}>Size</th>}
            </tr>
          </thead>
          <tbody>
            {job.files.map((file) => (
              <tr key={file.name}>
                <td>
                  {hrefOf.has(file.name) ? (
                    <a href={hrefOf.get(file.name)} download aria-label={`Download ${file.name}`}>{file.name}</a>
                  ) : (
                    <code>{file.name}</code>
                  )}
                </td>
                <td className={styles.number}>{file.rows.toLocaleString("en-US")}</td>
                {job.status === "done" && <td className={styles.number}>{formatBytes(file.bytes ?? 0)}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {manifest && (
        <p>
          <a className="btn btn-small" href={manifest.href} download aria-label="Download manifest.json">Download manifest.json</a>
        </p>
      )}
    </div>
  );
}
