// Human input (A.3 wait_for_input, the human_review handler, G.3 custom signals): a step with a
// gate waits, with the instance `waiting`, until the custom signal `human_input:<block id>`
// brings the answer (stored under context.data[store_as or block id]). After `timeout` the
// gate escalates: the step runs `escalation_handler` instead, or fails when there is none. A
// human_review step is all gate: its handler (engine/handlers/human-review.ts) outputs the answer.
import { HumanInputDef, type HumanChoice, type StepBlock } from "../../../sequence/schema.ts";
import { active, settled, type Env, type NodeState, type Progress } from "../state.ts";

export const HUMAN_INPUT_SIGNAL = "human_input:";

/** The step's input gate: its wait_for_input, or a human_review step's params. */
export function inputGate(step: StepBlock): HumanInputDef | undefined {
  if (step.wait_for_input) return step.wait_for_input;
  if (step.handler !== "human_review") return undefined;
  const parsed = HumanInputDef.safeParse(step.params ?? {});
  return parsed.success ? parsed.data : HumanInputDef.parse({});
}

/** The values an answer may take: the gate's choices, Yes/No when it names none. */
export function choiceValues(gate: HumanInputDef): string[] {
  return (gate.choices ?? DEFAULT_CHOICES).map((choice) => choice.value);
}

/** A.3: a gate without choices asks Yes or No. */
export const DEFAULT_CHOICES: readonly HumanChoice[] = [{ label: "Yes", value: "yes" }, { label: "No", value: "no" }];

/** Where the gate stands: null once the step may go on to run its handler. */
export function evaluateGate(step: StepBlock, gate: HumanInputDef, state: NodeState, env: Env): Progress | null {
  // Answered (a human_review step's handler outputs the answer) or escalated: the step runs.
  if (state.input !== undefined || state.escalated) return null;
  const timesOutAt = gate.timeout === undefined ? null : Date.parse(state.reachedAt!) + gate.timeout;
  if (timesOutAt !== null && env.now.getTime() >= timesOutAt) {
    if (gate.escalation_handler) {
      state.escalated = true;
      return null;
    }
    state.status = "failed";
    state.failure = { message: "human input timed out", retryable: false, code: "input_timeout" };
    return settled("failed");
  }
  return active({ waiting: true, until: timesOutAt });
}
