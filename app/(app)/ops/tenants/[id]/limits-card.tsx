"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ChangeError, ConfirmButton } from "../../../../_components/confirm-button";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { ObjectiveRetentionForm } from "./objective-retention-form";
import { LocalTime } from "../../../../_components/local-time";

const MAX_INT4 = 2_147_483_647;
const UNITS = [
  [86_400_000, "d"],
  [3_600_000, "h"],
  [60_000, "min"],
  [1_000, "s"],
] as const;

/** 60000 → "1 min", 90000 → "90 s", 250 → "250 ms": the largest unit that divides it. */
export function formatMs(ms: number): string {
  for (const [size, unit] of UNITS) if (ms >= size && ms % size === 0) return `${(ms / size).toLocaleString("en-US")} ${unit}`;
  return `${ms.toLocaleString("en-US")} ms`;
}

/** An input's value as an override: empty is the engine default (null). */
const override = (value: string) => (value.trim() === "" ? null : Number(value));

/**
 * The tenant's limits, each saved on its own: its claim cap, in-flight limit, step limit,
 * outbound requests per host and API request rate (engines and web processes follow within a
 * second), its step budget and its rate limits. Every change is in the audit log.
 */
export function LimitsCard({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const limits = useQuery({ ...trpc.ops.limits.get.queryOptions({ tenantId }), refetchInterval: 10_000 });
  if (limits.error) return <QueryError error={limits.error} />;
  if (!limits.data) return <div className="skeleton" aria-busy="true" aria-label="Loading limits" />;
  const { data } = limits;
  return (
    <>
      <h3>Claims, concurrency and request rates</h3>
      {/* Mounted once the limits are known, so the inputs start from the saved values. */}
      <CapsForm
        tenantId={tenantId}
        claimCap={data.claimCap}
        maxConcurrency={data.maxConcurrency}
        maxSteps={data.maxSteps}
        outboundPerHost={data.outboundPerHost}
        apiRatePerSec={data.apiRatePerSec}
        cronSchedules={data.cronSchedules}
        webhookRatePerSec={data.webhookRatePerSec}
        defaults={data.defaults}
      />
      <h3>Lag objective and retention</h3>
      <ObjectiveRetentionForm
        tenantId={tenantId}
        lagObjectiveMs={data.lagObjectiveMs}
        retentionDays={data.retentionDays}
        defaults={data.defaults}
      />
      <h3>Step budget</h3>
      <BudgetSection tenantId={tenantId} budget={data.budget} />
      <h3>Rate limits</h3>
      <RateLimits tenantId={tenantId} rateLimits={data.rateLimits} />
    </>
  );
}

/** After a change: the limits (and the activity that records it) are read again. */
function useInvalidate() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => Promise.all([
    queryClient.invalidateQueries(trpc.ops.limits.pathFilter()),
    queryClient.invalidateQueries(trpc.ops.audit.pathFilter()),
  ]);
}

function CapsForm({
  tenantId, claimCap, maxConcurrency, maxSteps, outboundPerHost, apiRatePerSec, cronSchedules, webhookRatePerSec, defaults,
}: {
  tenantId: string;
  claimCap: number | null;
  maxConcurrency: number | null;
  maxSteps: number | null;
  outboundPerHost: number | null;
  apiRatePerSec: number | null;
  cronSchedules: number | null;
  webhookRatePerSec: number | null;
  defaults: {
    claimCap: number; maxConcurrency: number; maxSteps: number; outboundPerHost: number; apiRatePerSec: number; cronSchedules: number;
    webhookRatePerSec: number;
  };
}) {
  const trpc = useTRPC();
  const invalidate = useInvalidate();
  const [cap, setCap] = useState(claimCap?.toString() ?? "");
  const [concurrency, setConcurrency] = useState(maxConcurrency?.toString() ?? "");
  const [steps, setSteps] = useState(maxSteps?.toString() ?? "");
  const [outbound, setOutbound] = useState(outboundPerHost?.toString() ?? "");
  const [apiRate, setApiRate] = useState(apiRatePerSec?.toString() ?? "");
  const [schedules, setSchedules] = useState(cronSchedules?.toString() ?? "");
  const [webhookRate, setWebhookRate] = useState(webhookRatePerSec?.toString() ?? "");
  const save = useMutation(trpc.ops.limits.set.mutationOptions({ onSettled: invalidate }));
  const capDefault = defaults.claimCap === 0 ? "no cap" : defaults.claimCap.toLocaleString("en-US");
  const said = (value: number | null, fallback: string, unit = "") => (value === null ? `the default (${fallback}${unit})` : `${value.toLocaleString("en-US")}${unit}`);

  return (
    <>
      <p className="muted">
        The claim cap bounds the tenant&apos;s instances in one claim batch; the in-flight limit bounds its instances in flight per
        engine process; the step limit bounds its steps running at once per engine process (every parallel branch counts); the
        outbound limit bounds its requests open at once to one host per process (over it a step waits); the API rate bounds
        each of its API keys&apos; and users&apos; requests per second (the burst in proportion; over it a request gets 429); the
        cron schedules limit bounds how many schedules it may have (one more is refused); the webhook rate bounds its public
        webhook requests per second per web process (over it a webhook gets 429).
        Empty means the engine default. Engines and web processes follow a change within a second.
      </p>
      <ChangeError what="save the limits" error={save.error} />
      <form
        className="form-row"
        aria-label="Claim cap, in-flight limit, step limit, outbound requests per host, API requests per second, cron schedules and webhooks per second"
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate({
            tenantId, claimCap: override(cap), maxConcurrency: override(concurrency), maxSteps: override(steps),
            outboundPerHost: override(outbound), apiRatePerSec: override(apiRate), cronSchedules: override(schedules),
            webhookRatePerSec: override(webhookRate),
          });
        }}
      >
        <label>
          Claim cap
          <input
            className="input"
            name="claimCap"
            type="number"
            min={1}
            max={MAX_INT4}
            step={1}
            placeholder={`default: ${capDefault}`}
            value={cap}
            onChange={(event) => { setCap(event.target.value); save.reset(); }}
          />
        </label>
        <label>
          In-flight limit
          <input
            className="input"
            name="maxConcurrency"
            type="number"
            min={1}
            max={MAX_INT4}
            step={1}
            placeholder={`default: ${defaults.maxConcurrency.toLocaleString("en-US")}`}
            value={concurrency}
            onChange={(event) => { setConcurrency(event.target.value); save.reset(); }}
          />
        </label>
        <label>
          Step limit
          <input
            className="input"
            name="maxSteps"
            type="number"
            min={1}
            max={MAX_INT4}
            step={1}
            placeholder={`default: ${defaults.maxSteps.toLocaleString("en-US")}`}
            value={steps}
            onChange={(event) => { setSteps(event.target.value); save.reset(); }}
          />
        </label>
        <label>
          Outbound requests per host
          <input
            className="input"
            name="outboundPerHost"
            type="number"
            min={1}
            max={MAX_INT4}
            step={1}
            placeholder={`default: ${defaults.outboundPerHost.toLocaleString("en-US")}`}
            value={outbound}
            onChange={(event) => { setOutbound(event.target.value); save.reset(); }}
          />
        </label>
        <label>
          API requests per second
          <input
            className="input"
            name="apiRatePerSec"
            type="number"
            min={1}
            max={MAX_INT4}
            step={1}
            placeholder={`default: ${defaults.apiRatePerSec.toLocaleString("en-US")}`}
            value={apiRate}
            onChange={(event) => { setApiRate(event.target.value); save.reset(); }}
          />
        </label>
        <label>
          Cron schedules
          <input
            className="input"
            name="cronSchedules"
            type="number"
            min={1}
            max={MAX_INT4}
            step={1}
            placeholder={`default: ${defaults.cronSchedules.toLocaleString("en-US")}`}
            value={schedules}
            onChange={(event) => { setSchedules(event.target.value); save.reset(); }}
          />
        </label>
        <label>
          Webhooks per second
          <input
            className="input"
            name="webhookRatePerSec"
            type="number"
            min={1}
            max={MAX_INT4}
            step={1}
            placeholder={`default: ${defaults.webhookRatePerSec.toLocaleString("en-US")}`}
            value={webhookRate}
            onChange={(event) => { setWebhookRate(event.target.value); save.reset(); }}
          />
        </label>
        <button className="btn btn-primary" type="submit" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Save limits"}
        </button>
      </form>
      {save.data && (
        <p className="status-line" role="status">
          Saved: claim cap {said(save.data.claimCap, capDefault)}, in-flight limit {said(save.data.maxConcurrency, defaults.maxConcurrency.toLocaleString("en-US"))}, step
          limit {said(save.data.maxSteps, defaults.maxSteps.toLocaleString("en-US"))}, outbound requests per
          host {said(save.data.outboundPerHost, defaults.outboundPerHost.toLocaleString("en-US"))}, API
          rate {said(save.data.apiRatePerSec, defaults.apiRatePerSec.toLocaleString("en-US"), "/s")}, cron
          schedules {said(save.data.cronSchedules, defaults.cronSchedules.toLocaleString("en-US"))}, webhook
          rate {said(save.data.webhookRatePerSec, defaults.webhookRatePerSec.toLocaleString("en-US"), "/s")}.
        </p>
      )}
    </>
  );
}

interface Budget {
  stepsPerPeriod: number;
  periodSecs: number;
  used: number;
  periodStart: string;
}

function BudgetSection({ tenantId, budget }: { tenantId: string; budget: Budget | null }) {
  const trpc = useTRPC();
  const invalidate = useInvalidate();
  const [steps, setSteps] = useState(budget?.stepsPerPeriod.toString() ?? "");
  const [period, setPeriod] = useState((budget?.periodSecs ?? 3_600).toString());
  const save = useMutation(trpc.ops.limits.setBudget.mutationOptions({ onSettled: invalidate }));
  const removing = save.isPending && save.variables?.stepsPerPeriod === 0;

  return (
    <>
      {budget ? (
        <p>
          <strong>{budget.used.toLocaleString("en-US")}</strong> of {budget.stepsPerPeriod.toLocaleString("en-US")} steps used in this period of{" "}
          {formatMs(budget.periodSecs * 1_000)} (since <LocalTime iso={budget.periodStart} />)
          {budget.used >= budget.stepsPerPeriod && <> · <span className="badge badge-danger">exhausted</span></>}
        </p>
      ) : (
        <p className="muted">No budget: the tenant&apos;s steps are not counted.</p>
      )}
      <ChangeError what={save.variables?.stepsPerPeriod === 0 ? "remove the budget" : "save the budget"} error={save.error} />
      <form
        className="form-row"
        aria-label="Step budget"
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate({ tenantId, stepsPerPeriod: Number(steps), periodSecs: Number(period) });
        }}
      >
        <label>
          Steps per period
          <input
            className="input"
            name="stepsPerPeriod"
            type="number"
            required
            min={1}
            step={1}
            value={steps}
            onChange={(event) => setSteps(event.target.value)}
          />
        </label>
        <label>
          Period, seconds
          <input
            className="input"
            name="periodSecs"
            type="number"
            required
            min={1}
            max={31_536_000}
            step={1}
            value={period}
            onChange={(event) => setPeriod(event.target.value)}
          />
        </label>
        <button className="btn btn-primary" type="submit" disabled={save.isPending}>
          {save.isPending && !removing ? "Saving…" : "Save budget"}
        </button>
        {budget && (
          <ConfirmButton
            label="Remove budget"
            question="Remove the budget? The tenant's steps are no longer limited by it."
            pending={removing}
            pendingLabel="Removing…"
            onConfirm={() =>
              save.mutate(
                { tenantId, stepsPerPeriod: 0, periodSecs: budget.periodSecs },
                { onSuccess: () => { setSteps(""); } },
              )
            }
          />
        )}
      </form>
    </>
  );
}

interface RateLimit {
  key: string;
  maxCount: number;
  windowMs: number;
  inWindow: number;
}

function RateLimits({ tenantId, rateLimits }: { tenantId: string; rateLimits: readonly RateLimit[] }) {
  const trpc = useTRPC();
  const invalidate = useInvalidate();
  const remove = useMutation(trpc.ops.limits.setRateLimit.mutationOptions({ onSettled: invalidate }));
  const add = useMutation(trpc.ops.limits.setRateLimit.mutationOptions({ onSettled: invalidate }));
  const [key, setKey] = useState("");
  const [maxCount, setMaxCount] = useState("");
  const [windowMs, setWindowMs] = useState("60000");

  return (
    <>
      <p className="muted">
        At most “max” steps whose <code>rate_limit_key</code> is the key start in any window; the others wait for room.
      </p>
      <ChangeError what="remove the rate limit" error={remove.error} />
      {rateLimits.length === 0 ? (
        <p className="empty">No rate limits.</p>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Rate limits">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Max</th>
                <th scope="col">Window</th>
                <th scope="col">In window</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {rateLimits.map((r) => (
                <tr key={r.key}>
                  <td><code>{r.key}</code></td>
                  <td>{r.maxCount.toLocaleString("en-US")}</td>
                  <td title={`${r.windowMs.toLocaleString("en-US")} ms`}>{formatMs(r.windowMs)}</td>
                  <td>{r.inWindow.toLocaleString("en-US")}</td>
                  <td className="cell-actions">
                    <ConfirmButton
                      label="Remove"
                      accessibleLabel={`Remove rate limit ${r.key}`}
                      question={`Remove the limit on ${r.key}?`}
                      pending={remove.isPending && remove.variables?.key === r.key}
                      pendingLabel="Removing…"
                      onConfirm={() => remove.mutate({ tenantId, key: r.key, maxCount: 0, windowMs: r.windowMs })}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ChangeError what="save the rate limit" error={add.error} />
      <form
        className="form-row"
        aria-label="Add a rate limit"
        onSubmit={(event) => {
          event.preventDefault();
          add.mutate(
            { tenantId, key, maxCount: Number(maxCount), windowMs: Number(windowMs) },
            {
              onSuccess: () => {
                setKey("");
                setMaxCount("");
              },
            },
          );
        }}
      >
        <label>
          Key
          <input
            className="input"
            name="key"
            required
            maxLength={256}
            pattern=".*\S.*"
            title="The rate_limit_key of the steps to limit, e.g. smtp"
            autoComplete="off"
            spellCheck={false}
            value={key}
            onChange={(event) => setKey(event.target.value)}
          />
        </label>
        <label>
          Max per window
          <input
            className="input"
            name="maxCount"
            type="number"
            required
            min={1}
            step={1}
            value={maxCount}
            onChange={(event) => setMaxCount(event.target.value)}
          />
        </label>
        <label>
          Window, ms
          <input
            className="input"
            name="windowMs"
            type="number"
            required
            min={1}
            max={86_400_000}
            step={1}
            value={windowMs}
            onChange={(event) => setWindowMs(event.target.value)}
          />
        </label>
        <button className="btn btn-primary" type="submit" disabled={add.isPending}>
          {add.isPending ? "Saving…" : "Save rate limit"}
        </button>
      </form>
      <p className="muted form-hint">Saving a key that is already limited changes its limit.</p>
    </>
  );
}
