// Triggers (wire-format L), shared by REST (/triggers, /webhooks) and the settings page (tRPC):
// create with the slug's claim across tenants, remove, and fire, each firing recorded as one of
// the trigger's deliveries. Creates and removals get their line in the audit log.
import { z } from "zod";
import { AppError } from "../engine/errors.ts";
import { checkSize } from "../engine/size-limits.ts";
import {
  isTriggerSlug, TRIGGER_TYPES, type DeliverySource, type TenantStore, type TriggerEvent, type TriggerRecord, type TriggerType,
} from "../engine/storage/index.ts";
import { recordAudit, type AuditEntry } from "./control/audit.ts";
import type { Services } from "./services.ts";

/** Every type Orch8 knows, so an unknown one is a 422 and a known but unsupported one a 400. */
const WIRE_TRIGGER_TYPES = ["webhook", "event", "nats", "file_watch", "activepieces_poll"] as const;

/** A trigger as a client asks for one (POST /triggers; the settings page sends the same). */
export const TriggerInput = z.object({
  slug: z.string(),
  sequence_name: z.string(),
  version: z.int().min(1).max(2_147_483_647).nullish(),
  namespace: z.string().max(255).nullish(),
  secret: z.string().max(1024).nullish(),
  trigger_type: z.enum(WIRE_TRIGGER_TYPES).nullish(),
  config: z.unknown().optional(),
});
export type TriggerInput = z.output<typeof TriggerInput>;

/** Who made the change, as the audit log names them. */
type Actor = Pick<AuditEntry, "actor" | "actorUserId">;

const invalid = (message: string, field: string) => new AppError("invalid_argument", message, [field]);

function checkedInput(input: TriggerInput) {
  if (input.slug === "" || input.sequence_name === "") throw invalid("slug and sequence_name are required", input.slug === "" ? "slug" : "sequence_name");
  if (input.slug.length > 255) throw invalid("slug must not exceed 255 characters", "slug");
  if (input.sequence_name.length > 255) throw invalid("sequence_name must not exceed 255 characters", "sequence_name");
  if (!isTriggerSlug(input.slug)) throw invalid("slug may hold only letters, digits, '-', '_', '.' and '~' (it is a URL path segment)", "slug");
  if (input.secret === "") throw invalid("trigger secret cannot be empty; omit it for a trigger without one", "secret");
  const type = input.trigger_type ?? "webhook";
  if (!(TRIGGER_TYPES as readonly string[]).includes(type)) throw invalid(`trigger_type '${type}' is not supported`, "trigger_type");
  return {
    slug: input.slug, namespace: input.namespace || "default", sequenceName: input.sequence_name, sequenceVersion: input.version ?? null,
    triggerType: type as TriggerType, config: input.config ?? null, secret: input.secret ?? null,
  };
}

const slugTaken = (slug: string) => new AppError("already_exists", `trigger '${slug}'`);

/**
 * Creates a trigger. Its slug is claimed across all tenants first (409 when any tenant has it),
 * then written on the tenant's backend; a write that fails gives the claim back.
 */
export async function createTrigger(services: Services, store: TenantStore, by: Actor, input: TriggerInput): Promise<TriggerRecord> {
  const trigger = checkedInput(input);
  if (!(await services.storage.claimTriggerSlug(store.tenantId, trigger.slug))) throw slugTaken(trigger.slug);
  let created: TriggerRecord | null;
  try {
    created = await store.insertTrigger(trigger);
  } catch (error) {
    await services.storage.releaseTriggerSlug(store.tenantId, trigger.slug);
    throw error;
  }
  if (!created) throw slugTaken(trigger.slug);
  await recordAudit(services.prisma, {
    ...by, tenantId: store.tenantId, action: "trigger.create",
    details: { slug: trigger.slug, trigger_type: trigger.triggerType, namespace: trigger.namespace, sequence_name: trigger.sequenceName, version: trigger.sequenceVersion, secret: trigger.secret !== null },
  });
  return created;
}

/** The removed trigger (its slug free again for anyone), or null when the tenant has none by that slug. */
export async function removeTrigger(services: Services, store: TenantStore, by: Actor, slug: string): Promise<TriggerRecord | null> {
  const removed = await store.deleteTrigger(slug);
  if (!removed) return null;
  await services.storage.releaseTriggerSlug(store.tenantId, slug);
  await recordAudit(services.prisma, { ...by, tenantId: store.tenantId, action: "trigger.delete", details: { slug } });
  return removed;
}

export interface Fired {
  instanceId: string;
  sequenceName: string;
}

/**
 * Starts the trigger's sequence with `data` as `context.data`, and records the delivery. The data
 * is held to the context's cap (the ledger's value sizes: 413, nothing created), as any other
 * instance's is. A trigger whose sequence is gone answers 404 naming both (Orch8: 500).
 */
export async function fire(store: TenantStore, trigger: TriggerRecord, data: unknown, event: TriggerEvent, source: DeliverySource, status: number): Promise<Fired> {
  try {
    checkSize("context", data);
  } catch (error) {
    await store.recordDelivery(trigger.slug, { source, status: 413, outcome: "body over the context limit", instanceId: null });
    throw error;
  }
  const fired = await store.fireTrigger(trigger, data, event);
  if (!fired) {
    await store.recordDelivery(trigger.slug, { source, status: 404, outcome: `sequence '${trigger.sequenceName}' not found`, instanceId: null });
    throw new AppError("not_found", `sequence '${trigger.sequenceName}' for trigger '${trigger.slug}'`);
  }
  await store.recordDelivery(trigger.slug, { source, status, outcome: "instance created", instanceId: fired.instanceId });
  return fired;
}

/** The trigger's 404 (wire-format L), for a slug that is missing or another tenant's alike. */
export const triggerNotFound = (slug: string) => new AppError("not_found", `trigger '${slug}'`);

/** The public route of a webhook trigger (REST v1's prefix; slugs need no escaping). */
export const webhookPath = (slug: string) => `/api/v1/webhooks/${slug}`;
