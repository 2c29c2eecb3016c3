"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Fragment, useState, useSyncExternalStore } from "react";
import { ChangeError, ConfirmButton } from "../../../../_components/confirm-button";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { Deliveries, SendTestForm } from "./trigger-activity";
import { CreateTriggerForm, type CreatedTrigger } from "./trigger-form";
import styles from "./triggers.module.css";
import { WebhookInstructions } from "./webhook-instructions";

const COLUMNS = 5;

/** This page's origin, for the full webhook URL ("" while rendering on the server, where there is none). */
function useOrigin(): string {
  return useSyncExternalStore(
    () => () => {},
    () => window.location.origin,
    () => "",
  );
}

type Open = { test: boolean; deliveries: boolean };

/**
 * The tenant's triggers: named ways to start a sequence, by a signed webhook from outside or an
 * `emit_event` step inside. Every member sees them, sends test events and reads deliveries;
 * admins add and remove them (the procedures check the role again).
 */
export function TriggersPanel({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const origin = useOrigin();
  // The page gets no role from its server component: the account's memberships tell it.
  const me = useQuery(trpc.account.me.queryOptions());
  const isAdmin = me.data?.tenants.find((t) => t.id === tenantId)?.role === "admin";
  const triggers = useQuery(trpc.triggers.list.queryOptions({ tenantId }));
  const invalidate = () => queryClient.invalidateQueries(trpc.triggers.pathFilter());
  const remove = useMutation(trpc.triggers.remove.mutationOptions({ onSettled: invalidate }));
  const [open, setOpen] = useState<Record<string, Open>>({});
  const toggle = (slug: string, part: keyof Open) =>
    setOpen((current) => {
      const was = current[slug] ?? { test: false, deliveries: false };
      return { ...current, [slug]: { ...was, [part]: !was[part] } };
    });
  // A new secret, until Done: in this state only, so no reload or revisit shows it again.
  const [created, setCreated] = useState<(CreatedTrigger & { secret: string; webhookPath: string }) | null>(null);

  let table;
  if (triggers.error) table = <QueryError error={triggers.error} />;
  else if (!triggers.data) table = <div className="skeleton" aria-busy="true" aria-label="Loading triggers" />;
  else if (triggers.data.length === 0) {
    table = (
      <p className="empty">
        No triggers yet.{isAdmin ? " Add one below to start a sequence from a webhook or an emit_event step." : " A tenant admin can add them."}
      </p>
    );
  } else {
    table = (
      <div className="table-wrap">
        <table className="table" aria-label="Triggers">
          <thead>
            <tr>
              <th scope="col">Slug</th>
              <th scope="col">Type</th>
              <th scope="col">Sequence</th>
              <th scope="col">Webhook URL</th>
              <th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {triggers.data.map((t) => {
              const shown = open[t.slug] ?? { test: false, deliveries: false };
              const panelId = `trigger-${t.slug}`;
              return (
                <Fragment key={t.slug}>
                  <tr>
                    <td><code>{t.slug}</code></td>
                    <td><span className={t.triggerType === "webhook" ? "badge badge-accent" : "badge"}>{t.triggerType}</span></td>
                    <td>
                      {t.sequenceName}{" "}
                      <span className="muted">{t.sequenceVersion === null ? "latest" : `v${t.sequenceVersion}`}</span>
                      {t.namespace !== "default" && <span className="muted"> · {t.namespace}</span>}
                    </td>
                    <td className={styles.url}>
                      {t.webhookPath ? (
                        <>
                          {/* Wraps before the slug first, not inside it. */}
                          <code>{origin + t.webhookPath.slice(0, t.webhookPath.lastIndexOf("/") + 1)}<wbr />{t.slug}</code>{" "}
                          {t.hasSecret ? (
                            <span className="badge badge-ok" title="Requests must be signed with the trigger's secret">signed</span>
                          ) : (
                            <span className="badge badge-warn" title="A webhook without a secret refuses every request: remove it and add it signed">
                              unsigned: refuses all
                            </span>
                          )}
                        </>
                      ) : (
                        <span className="muted">none: emit_event or /fire</span>
                      )}
                    </td>
                    <td className="cell-actions">
                      <button
                        type="button" className="btn btn-small" aria-label={`Send a test event to ${t.slug}`}
                        aria-expanded={shown.test} aria-controls={shown.test || shown.deliveries ? panelId : undefined}
                        onClick={() => toggle(t.slug, "test")}
                      >
                        Test
                      </button>{" "}
                      <button
                        type="button" className="btn btn-small" aria-label={`Deliveries of ${t.slug}`}
                        aria-expanded={shown.deliveries} aria-controls={shown.test || shown.deliveries ? panelId : undefined}
                        onClick={() => toggle(t.slug, "deliveries")}
                      >
                        Deliveries
                      </button>{" "}
                      {isAdmin && (
                        <ConfirmButton
                          label="Remove"
                          accessibleLabel={`Remove trigger ${t.slug}`}
                          question={t.triggerType === "webhook" ? `Remove ${t.slug}? Its URL stops working.` : `Remove ${t.slug}? emit_event steps naming it will fail.`}
                          pending={remove.isPending && remove.variables?.slug === t.slug}
                          pendingLabel="Removing…"
                          onConfirm={() => remove.mutate({ tenantId, slug: t.slug })}
                        />
                      )}
                    </td>
                  </tr>
                  {(shown.test || shown.deliveries) && (
                    <tr id={panelId}>
                      <td className="cell-panel" colSpan={COLUMNS}>
                        <div className={styles.panel}>
                          {shown.test && <SendTestForm tenantId={tenantId} slug={t.slug} />}
                          {shown.deliveries && <Deliveries tenantId={tenantId} slug={t.slug} />}
                        </div>
                      </td>
                    </tr>
                  )}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      </div>
    );
  }

  return (
    <>
      <p className="muted">
        A <strong>webhook</strong> trigger starts its sequence when a signed request comes to its URL; an <strong>event</strong>{" "}
        trigger when a step <code>{'{"handler": "emit_event", "params": {"trigger_slug": "…"}}'}</code> names it. Either way the
        data sent becomes the new instance&apos;s <code>context.data</code>.
      </p>
      <ChangeError what="remove the trigger" error={remove.error} />
      {table}
      {created && (
        <WebhookInstructions slug={created.slug} url={origin + created.webhookPath} secret={created.secret} onDone={() => setCreated(null)} />
      )}
      {isAdmin && (
        <CreateTriggerForm
          tenantId={tenantId}
          onCreated={(trigger) => {
            const { secret, webhookPath } = trigger;
            // A trigger made without a secret leaves an earlier one's panel up until its Done.
            if (secret !== null && webhookPath !== null) setCreated({ ...trigger, secret, webhookPath });
            void invalidate();
          }}
        />
      )}
    </>
  );
}
