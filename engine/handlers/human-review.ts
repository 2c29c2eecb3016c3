// `human_review` (A.3, G.3): a step that is all input gate (no params: HumanReviewParams). The
// engine runs it once the custom signal `human_input:<block id>` has brought the answer, and its
// output is R's gate row: `{"value": "<choice>", "_orch8_human_gate": true}`.
import { success, type Handler } from "./types.ts";

export const humanReview: Handler = async (input) => success({ value: input.humanInput, _orch8_human_gate: true });
