// `human_review` (A.3, G.3): a step that is all input gate (no params: HumanReviewParams). The
// engine runs it once the custom signal `human_input:<block id>` has brought the answer, which is
// the step's output.
import { success, type Handler } from "./types.ts";

export const humanReview: Handler = async (input) => success(input.humanInput);
