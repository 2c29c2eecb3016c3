"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId } from "react";
import { useTRPC } from "../../../_components/trpc";
import { Time } from "./instances/instance-ui";

/** What the form asks about: one gate, as instances.get and approvals.list both describe it. */
export interface HumanInputGate {
  blockId: string;
  handler: string;
  prompt: string;
  choices: { label: string; value: string }[];
  allowComment: boolean;
  /** When it escalates (or fails the step) unanswered; null without a timeout. */
  timesOutAt: string | null;
  /** An answer is queued that the engine has not taken yet. */
  answerQueued?: boolean;
}

/**
 * One gate's question: its choices (Yes/No unless the step names others) and, where allowed, a
 * comment, sent through instances.answer, the one answer path of the instance page and the
 * Approvals inbox. Instance and approval queries are refreshed once it is settled.
 */
export function HumanInputForm({
  tenantId, instanceId, gate, onAnswered,
}: {
  tenantId: string;
  instanceId: string;
  gate: HumanInputGate;
  onAnswered?: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const id = useId();
  const answer = useMutation(
    trpc.instances.answer.mutationOptions({
      onSuccess: () => onAnswered?.(),
      onSettled: () => Promise.all([
        queryClient.invalidateQueries(trpc.instances.pathFilter()),
        queryClient.invalidateQueries(trpc.approvals.pathFilter()),
      ]),
    }),
  );
  const sent = Boolean(gate.answerQueued) || answer.isSuccess;
  return (
    <form
      className="gate"
      aria-labelledby={`${id}-prompt`}
      onSubmit={(event) => {
        event.preventDefault();
        const form = new FormData(event.currentTarget);
        const comment = String(form.get("comment") ?? "").trim();
        answer.mutate({ tenantId, instanceId, blockId: gate.blockId, value: String(form.get("value") ?? ""), ...(comment ? { comment } : {}) });
      }}
    >
      <fieldset disabled={sent || answer.isPending}>
        <legend id={`${id}-prompt`}>{gate.prompt || <>Step <code>{gate.blockId}</code> asks for a decision</>}</legend>
        <p className="muted">
          Step <code>{gate.blockId}</code> ({gate.handler})
          {gate.timesOutAt && <> · unanswered, it times out at <Time iso={gate.timesOutAt} /></>}
        </p>
        <div className="checks-row">
          {gate.choices.map((choice) => (
            <label key={choice.value} className="choice">
              <input type="radio" name="value" value={choice.value} required />
              {choice.label}
            </label>
          ))}
        </div>
      </fieldset>
      {gate.allowComment && (
        <div className="field">
          <label htmlFor={`${id}-comment`}>Comment (optional)</label>
          <textarea id={`${id}-comment`} name="comment" className="input textarea" maxLength={4096} disabled={sent || answer.isPending} />
        </div>
      )}
      {answer.error && (
        <div className="alert alert-error" role="alert">
          Could not send the answer: {answer.error.message}
        </div>
      )}
      {sent ? (
        <p className="notice" role="status">Answer sent: the engine picks it up within moments.</p>
      ) : (
        <button type="submit" className="btn btn-primary" disabled={answer.isPending}>
          {answer.isPending ? "Sending…" : "Send answer"}
        </button>
      )}
    </form>
  );
}
