// A.3 context_access: what of the instance context a step's handler or worker sees. Absent,
// all of `data` and `config`; `audit` and `runtime` only when asked for; `data` may be narrowed
// to some top-level fields.
import type { ContextAccess } from "../sequence/schema.ts";

type Context = { data: unknown; config: unknown; [section: string]: unknown };

export function visibleContext(context: Context, access: ContextAccess | undefined): Record<string, unknown> {
  if (!access) return { data: context.data ?? null, config: context.config ?? null };
  const visible: Record<string, unknown> = {};
  const data = access.data;
  if (data === true || data === "all") visible.data = context.data ?? null;
  else if (typeof data === "object") {
    const source = typeof context.data === "object" && context.data !== null ? (context.data as Record<string, unknown>) : {};
    visible.data = Object.fromEntries(data.fields.filter((f) => Object.hasOwn(source, f)).map((f) => [f, source[f]]));
  }
  if (access.config) visible.config = context.config ?? null;
  if (access.audit) visible.audit = context.audit ?? [];
  if (access.runtime) visible.runtime = context.runtime ?? {};
  return visible;
}
