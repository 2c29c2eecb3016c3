// Params of the handlers that reach other instances of the tenant (send_signal, query_instance,
// emit_event) and of self_modify. Browser-safe: the handlers parse with these schemas and the
// editor draws its forms from them.
import { z } from "zod";
import { UUID_PATTERN } from "../model.ts";

/** G.1's built-in names; `{"custom": name}` is the other wire form. */
export const SIGNAL_NAMES = ["pause", "resume", "cancel", "update_context"] as const;

const instanceId = z.string().regex(UUID_PATTERN).describe("id of another instance of this tenant");

export const SendSignalParams = z.looseObject({
  instance_id: instanceId,
  signal_type: z.union([z.enum(SIGNAL_NAMES), z.strictObject({ custom: z.string() })]).describe('a built-in signal, or {"custom": "<name>"}'),
  payload: z.unknown().optional().describe("any JSON, delivered with the signal"),
});

export const QueryInstanceParams = z.looseObject({ instance_id: instanceId });

/** Empty and absent read the same. */
const name = z.string().optional().catch(undefined).transform((value) => value || undefined);

export const EMIT_NEEDS_TARGET = "emit_event needs trigger_slug (or sequence_name)";

export const EmitEventParams = z
  .looseObject({
    trigger_slug: name.describe("one of the tenant's triggers"),
    sequence_name: name.describe("or a sequence of this namespace"),
    data: z.unknown().optional().describe("the child's context.data (default {})"),
    meta: z.record(z.string(), z.unknown()).catch({}).optional().describe("goes into the child's metadata"),
    dedupe_key: name.describe("at most one child per key in the scope"),
    dedupe_scope: z.enum(["parent", "tenant"], { error: 'dedupe_scope must be "parent" or "tenant"' }).optional().describe("default tenant"),
  })
  .refine((params) => params.trigger_slug || params.sequence_name, { message: EMIT_NEEDS_TARGET });

export const SelfModifyParams = z.looseObject({
  blocks: z.array(z.unknown()).describe("blocks to add to this instance (validated like a sequence's)"),
  position: z.number().int().min(0).optional().describe("index among the top-level blocks; default right after this step's"),
});
