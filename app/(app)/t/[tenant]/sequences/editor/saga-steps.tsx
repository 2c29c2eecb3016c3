"use client";

// A saga's steps (wire-format A.13): each an id, an action block and an optional compensation
// block. The blocks themselves are drawn on the canvas and edited by selecting them there or in
// the outline; here the steps are added, named, removed, and their blocks' types chosen.
import { useId } from "react";
import { sagaSteps } from "../../../../../_components/sequence-graph/arms.ts";
import { addSagaStep, BLOCK_TYPES, removeSagaStep, setSagaPart, setSagaStepId, type JsonBlock, type Path, type SequenceDoc } from "./model.ts";

export type DocEdit = (doc: SequenceDoc, path: Path) => SequenceDoc;

function StepRow({ index, id, action, compensation, onEdit }: { index: number; id: string; action?: string; compensation?: string; onEdit(edit: DocEdit): void }) {
  const ids = { id: useId(), action: useId(), compensation: useId() };
  const n = index + 1;
  return (
    <div className="seq-saga-step" role="group" aria-label={`Saga step ${n}`}>
      <div className="field">
        <label htmlFor={ids.id}>{`Step ${n} id`}</label>
        <input id={ids.id} className="input" value={id} onChange={(e) => onEdit((doc, saga) => setSagaStepId(doc, saga, index, e.target.value))} />
      </div>
      <div className="field">
        <label htmlFor={ids.action}>{`Step ${n} action`}</label>
        <select id={ids.action} className="select" value={action ?? ""} onChange={(e) => onEdit((doc, saga) => setSagaPart(doc, saga, index, "action", e.target.value))}>
          {action === undefined && <option value="">(none)</option>}
          {BLOCK_TYPES.map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={ids.compensation}>{`Step ${n} compensation`}</label>
        <select
          id={ids.compensation}
          className="select"
          value={compensation ?? ""}
          onChange={(e) => onEdit((doc, saga) => setSagaPart(doc, saga, index, "compensation", e.target.value || null))}
        >
          <option value="">(none)</option>
          {BLOCK_TYPES.map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
      </div>
      <button type="button" className="btn btn-small" aria-label={`Remove saga step ${n}`} onClick={() => onEdit((doc, saga) => removeSagaStep(doc, saga, index))}>
        Remove
      </button>
    </div>
  );
}

export function SagaSteps({ block, onEdit }: { block: JsonBlock; onEdit(edit: DocEdit): void }) {
  const steps = sagaSteps(block);
  return (
    <fieldset className="seq-fieldset">
      <legend>Saga steps</legend>
      <p className="muted form-hint">
        Run in order; on a failure, the compensations of the steps that completed run in reverse. Changing a type puts a new block of that type in its
        place; select an action or compensation on the canvas to edit it.
      </p>
      {steps.map((step, index) => (
        <StepRow key={index} index={index} id={step.id} action={step.action?.block.type} compensation={step.compensation?.block.type} onEdit={onEdit} />
      ))}
      <button type="button" className="btn btn-small" onClick={() => onEdit((doc, saga) => addSagaStep(doc, saga))}>
        Add saga step
      </button>
    </fieldset>
  );
}
