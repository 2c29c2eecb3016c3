"use client";

// What opens under a trigger's row: a test event to send, and the trigger's recent deliveries.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useId, useState, type FormEvent } from "react";
import { shortId } from "../../../../../engine/short-id.ts";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import styles from "./triggers.module.css";
import { LocalTime } from "../../../../_components/local-time";

const instanceHref = (tenantId: string, instanceId: string) => `/t/${tenantId}/instances/${instanceId}`;

/** Fires the trigger with a JSON value of the user's as `context.data`, as a real firing would. */
export function SendTestForm({ tenantId, slug }: { tenantId: string; slug: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const textId = useId();
  const problemId = useId();
  const [json, setJson] = useState("{}");
  const [problem, setProblem] = useState<string | null>(null);
  // The test is one of the trigger's deliveries: the list below shows it once refetched.
  const send = useMutation(
    trpc.triggers.sendTest.mutationOptions({ onSettled: () => queryClient.invalidateQueries(trpc.triggers.deliveries.queryFilter({ tenantId, slug })) }),
  );

  const submit = (event: FormEvent) => {
    event.preventDefault();
    let data: unknown;
    try {
      if (json.trim() === "") throw new Error("enter a JSON value, e.g. {}");
      data = JSON.parse(json);
    } catch (error) {
      setProblem(`Not valid JSON: ${(error as Error).message}`);
      return;
    }
    setProblem(null);
    send.mutate({ tenantId, slug, data });
  };

  const shown = problem ?? (send.error && `Could not send the test event: ${send.error.message}`);
  return (
    <form className={styles.testForm} onSubmit={submit} noValidate aria-label={`Send a test event to ${slug}`}>
      <label htmlFor={textId}>
        <strong>Send a test event</strong> <span className="muted">(JSON, becomes <code>context.data</code>)</span>
      </label>
      <textarea
        id={textId}
        className="input textarea"
        name="data"
        value={json}
        spellCheck={false}
        aria-invalid={problem ? true : undefined}
        aria-describedby={problem ? problemId : undefined}
        onChange={(event) => setJson(event.target.value)}
      />
      {shown && (
        <p id={problemId} className="field-error" role="alert">
          {shown}
        </p>
      )}
      <div className="toolbar">
        <button type="submit" className="btn" disabled={send.isPending}>
          {send.isPending ? "Sending…" : "Send test event"}
        </button>
        {send.data && !send.isPending && (
          <span className="status-line" role="status">
            Started{" "}
            <Link prefetch={false} href={instanceHref(tenantId, send.data.instanceId)}>
              instance <code>{shortId(send.data.instanceId)}</code>
            </Link>{" "}
            of {send.data.sequenceName}.
          </span>
        )}
      </div>
    </form>
  );
}

const SOURCES: Record<string, string> = { webhook: "webhook", fire: "/fire", test: "test event" };

function StatusBadge({ status }: { status: number }) {
  const tone = status < 300 ? "badge-ok" : status === 429 ? "badge-warn" : "badge-danger";
  return <span className={`badge ${tone}`}>{status}</span>;
}

/** The trigger's newest deliveries (the server keeps 50), newest first, refreshed while open: webhooks come from outside the page. */
export function Deliveries({ tenantId, slug }: { tenantId: string; slug: string }) {
  const trpc = useTRPC();
  const deliveries = useQuery(trpc.triggers.deliveries.queryOptions({ tenantId, slug }, { refetchInterval: 5_000 }));
  let body;
  if (deliveries.error) body = <QueryError error={deliveries.error} />;
  else if (!deliveries.data) body = <div className="skeleton" aria-busy="true" aria-label={`Loading deliveries of ${slug}`} />;
  else if (deliveries.data.length === 0) body = <p className="muted">No deliveries yet.</p>;
  else {
    body = (
      <div className="table-wrap">
        <table className="table" aria-label={`Deliveries of ${slug}`}>
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Source</th>
              <th scope="col">Status</th>
              <th scope="col">Outcome</th>
              <th scope="col">Instance</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.data.map((d) => (
              <tr key={d.id}>
                <td>
                  <LocalTime iso={d.receivedAt} />
                </td>
                <td>{SOURCES[d.source] ?? d.source}</td>
                <td><StatusBadge status={d.status} /></td>
                <td>{d.outcome}</td>
                <td>
                  {d.instanceId ? (
                    <Link prefetch={false} href={instanceHref(tenantId, d.instanceId)} title={d.instanceId}>
                      <code>{shortId(d.instanceId)}</code>
                    </Link>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }
  return (
    <section aria-label={`Recent deliveries of ${slug}`}>
      <h3>Recent deliveries</h3>
      {body}
    </section>
  );
}
