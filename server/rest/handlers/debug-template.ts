// POST /debug/template (wire-format V): resolves a template against a context and outputs the
// caller supplies, as a step's params would be. It reads no stored data; a bad template is not
// a 4xx but an `error` in the answer. `entries` are its `{{ … }}` placeholders, each resolved on
// its own, so a client can see which one failed.
import { z } from "zod";
import { isAppError } from "../../../engine/errors.ts";
import { resolveTemplateString, templateExpressions, type Scope } from "../../../engine/sequence/template.ts";
import { shapedBody } from "../body.ts";
import { json } from "../http.ts";
import { requireTenantHeader, type RestContext } from "../route.ts";

const DebugTemplate = z.object({
  template: z.string(),
  context_data: z.unknown().optional(),
  context_config: z.unknown().optional(),
  outputs: z.record(z.string(), z.unknown()).nullish(),
});
type DebugTemplate = z.output<typeof DebugTemplate>;
export const debugTemplateBody = shapedBody(DebugTemplate, () => []);

/** JSON's name for the value's type. */
function typeOf(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "object" ? "object" : typeof value;
}

type Resolved = { result: unknown; result_type: string } | { error: string };

function resolve(template: string, scope: Scope): Resolved {
  try {
    const result = resolveTemplateString(template, scope) ?? null;
    return { result, result_type: typeOf(result) };
  } catch (error) {
    if (isAppError(error)) return { error: error.message };
    throw error;
  }
}

export async function debugTemplate(context: RestContext<DebugTemplate>): Promise<Response> {
  requireTenantHeader(context, "name the tenant (X-Tenant-Id)");
  const { template, context_data: data, context_config: config, outputs } = context.body;
  const scope: Scope = { context: { data: data ?? null, config: config ?? null }, outputs: outputs ?? {}, instanceId: "", runtime: {}, state: {} };
  let expressions: string[];
  try {
    expressions = templateExpressions(template);
  } catch (error) {
    if (isAppError(error)) return json(200, { entries: [], error: error.message });
    throw error;
  }
  const entries = expressions.map((expression) => ({ expression, ...resolve(`{{${expression}}}`, scope) }));
  return json(200, { ...resolve(template, scope), entries });
}
