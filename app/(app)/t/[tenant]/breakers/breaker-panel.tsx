"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../../../_components/trpc";
import { QueryError } from "../../../../_components/query-error";
import { BreakerStateBadge, MutationError, ResetButton, TimeLeft } from "../../../../_components/breakers";
import { LocalTime } from "../../../../_components/local-time";

export function BreakerPanel({ tenantId, canReset }: { tenantId: string; canReset: boolean }) {
  return (
    <>
      <section className="card" aria-labelledby="breakers-heading">
        <h2 id="breakers-heading">Open breakers</h2>
        <BreakerTable tenantId={tenantId} canReset={canReset} />
      </section>
      <section className="card" aria-labelledby="settings-heading">
        <h2 id="settings-heading">Per-handler settings</h2>
        <HandlerSettings tenantId={tenantId} canEdit={canReset} />
      </section>
      <section className="card" aria-labelledby="resets-heading">
        <h2 id="resets-heading">Recent resets</h2>
        <ResetList tenantId={tenantId} />
      </section>
    </>
  );
}

/** A handler's own threshold and cooldown (admins), within the bounds the operator allows. */
function HandlerSettings({ tenantId, canEdit }: { tenantId: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const breakers = useQuery(trpc.breakers.list.queryOptions({ tenantId }));
  const save = useMutation(
    trpc.breakers.setSettings.mutationOptions({ onSuccess: () => queryClient.invalidateQueries(trpc.breakers.pathFilter()) }),
  );
  if (breakers.error) return <QueryError error={breakers.error} />;
  if (!breakers.data) return <div className="skeleton" aria-busy="true" aria-label="Loading settings" />;
  const { bounds, handlerSettings } = breakers.data;
  return (
    <>
      {handlerSettings.length === 0 ? (
        <p className="empty">Every handler uses the platform defaults.</p>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Per-handler settings">
            <thead>
              <tr>
                <th scope="col">Handler</th>
                <th scope="col">Failures to open</th>
                <th scope="col">Cooldown</th>
              </tr>
            </thead>
            <tbody>
              {handlerSettings.map((h) => (
                <tr key={h.handler}>
                  <td><code>{h.handler}</code></td>
                  <td>{h.failureThreshold}</td>
                  <td>{h.cooldownSecs} s</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {canEdit && (
        <form
          className="form-row"
          aria-label="Set a handler's breaker settings"
          onSubmit={(event) => {
            event.preventDefault();
            const form = new FormData(event.currentTarget);
            save.mutate({
              tenantId,
              handler: String(form.get("handler") ?? ""),
              failureThreshold: Number(form.get("failureThreshold")),
              cooldownSecs: Number(form.get("cooldownSecs")),
            });
          }}
        >
          <MutationError error={save.error} />
          <label>
            Handler <input className="input" name="handler" required maxLength={256} />
          </label>
          <label>
            Failures to open ({bounds.threshold[0]}–{bounds.threshold[1]})
            <input className="input" name="failureThreshold" type="number" required min={bounds.threshold[0]} max={bounds.threshold[1]} />
          </label>
          <label>
            Cooldown, seconds ({bounds.cooldownSecs[0]}–{bounds.cooldownSecs[1]})
            <input className="input" name="cooldownSecs" type="number" required min={bounds.cooldownSecs[0]} max={bounds.cooldownSecs[1]} />
          </label>
          <button className="btn btn-primary" type="submit" disabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save"}
          </button>
        </form>
      )}
    </>
  );
}

function BreakerTable({ tenantId, canReset }: { tenantId: string; canReset: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const breakers = useQuery({ ...trpc.breakers.list.queryOptions({ tenantId }), refetchInterval: 5_000 });
  const reset = useMutation(
    trpc.breakers.reset.mutationOptions({
      onSettled: () => queryClient.invalidateQueries(trpc.breakers.pathFilter()),
    }),
  );
  if (breakers.error) return <QueryError error={breakers.error} />;
  if (!breakers.data) return <div className="skeleton" aria-busy="true" aria-label="Loading breakers" />;
  const { failureThreshold, cooldownSecs } = breakers.data;
  return (
    <>
      <p className="muted">
        A breaker opens after {failureThreshold} failures in a row and stays open for {cooldownSecs} s; then the next call
        probes it (half open). Closed breakers are not listed: their failure counts live in the engines.
      </p>
      <MutationError error={reset.error} />
      {breakers.data.breakers.length === 0 ? (
        <p className="empty">No open breakers: every handler is healthy.</p>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Open breakers">
            <thead>
              <tr>
                <th scope="col">Handler</th>
                <th scope="col">State</th>
                <th scope="col">Failures</th>
                <th scope="col">Time left</th>
                <th scope="col">Opened at</th>
                {canReset && <th scope="col"><span className="visually-hidden">Actions</span></th>}
              </tr>
            </thead>
            <tbody>
              {breakers.data.breakers.map((b) => (
                <tr key={b.handler}>
                  <td><code>{b.handler}</code></td>
                  <td><BreakerStateBadge state={b.state} /></td>
                  <td>{b.failureCount} / {b.failureThreshold}</td>
                  <td><TimeLeft state={b.state} secondsLeft={b.secondsLeft} fetchedAt={breakers.dataUpdatedAt} /></td>
                  <td><LocalTime iso={b.openedAt} /></td>
                  {canReset && (
                    <td className="cell-actions">
                      <ResetButton
                        handler={b.handler}
                        pending={reset.isPending && reset.variables?.handler === b.handler}
                        onConfirm={() => reset.mutate({ tenantId, handler: b.handler })}
                      />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function ResetList({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const resets = useQuery(trpc.breakers.resets.queryOptions({ tenantId }));
  if (resets.error) return <QueryError error={resets.error} />;
  if (!resets.data) return <div className="skeleton" aria-busy="true" aria-label="Loading resets" />;
  if (resets.data.length === 0) return <p className="empty">No breaker has been reset yet.</p>;
  return (
    <div className="table-wrap">
      <table className="table" aria-label="Recent resets">
        <thead>
          <tr>
            <th scope="col">Handler</th>
            <th scope="col">Reset by</th>
            <th scope="col">When</th>
          </tr>
        </thead>
        <tbody>
          {resets.data.map((r) => (
            <tr key={r.id}>
              <td><code>{r.handler}</code></td>
              <td>{r.resetBy}</td>
              <td><LocalTime iso={r.resetAt} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
