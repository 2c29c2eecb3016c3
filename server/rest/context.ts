// The instance context on the wire (wire-format E `<Instance>`, Appendix 15): `data` and
// `config` default to null (not {}), `audit` to [], `runtime` to its zero values. Creation
// stores it with every default filled in; reads fill them in again for rows written elsewhere.
import { z } from "zod";

/** Optional on the wire; `null` reads as absent. */
const nullable = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? null);
const timestamp = z.iso.datetime({ offset: true });

const Runtime = z.object({
  current_step: nullable(z.string()),
  attempt: z.uint32().default(0),
  started_at: nullable(timestamp),
  current_step_started_at: nullable(timestamp),
  resource_key: nullable(z.string()),
  total_steps_executed: z.int().min(0).default(0),
  dry_run: z.boolean().default(false),
  dry_run_auto_approve: z.boolean().default(false),
  // Omitted when absent.
  instance_id: z.string().nullish().transform((value) => value ?? undefined),
  run_id: z.string().nullish().transform((value) => value ?? undefined),
});

const RUNTIME_DEFAULTS = Runtime.parse({});

const AuditEntry = z.object({
  timestamp,
  event: z.string(),
  details: z.unknown().default(null),
});

export const InstanceContext = z.object({
  data: z.unknown().default(null),
  config: z.unknown().default(null),
  audit: z.array(AuditEntry).nullish().transform((value) => value ?? []),
  runtime: Runtime.nullish().transform((value) => value ?? { ...RUNTIME_DEFAULTS }),
});

export type InstanceContext = z.output<typeof InstanceContext>;

/** The stored context with the wire defaults filled in; fields this file does not know are kept. */
export function contextForWire(stored: unknown): unknown {
  const context = (typeof stored === "object" && stored !== null ? stored : {}) as Record<string, unknown>;
  const runtime = typeof context.runtime === "object" && context.runtime !== null ? context.runtime : {};
  return {
    ...context,
    data: context.data ?? null,
    config: context.config ?? null,
    audit: context.audit ?? [],
    runtime: { ...RUNTIME_DEFAULTS, ...runtime },
  };
}
