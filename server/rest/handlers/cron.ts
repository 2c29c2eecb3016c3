// Cron schedules over REST (wire-format M): create (201 {id, next_fire_at}), list oldest first,
// read, PUT any subset (null = unchanged), delete (204), and the next fires. An operator key
// names the tenant in X-Tenant-Id; another tenant's schedule answers as a missing one.
import { z } from "zod";
import { nameString } from "../../../engine/sequence/schema.ts";
import type { CronScheduleRecord } from "../../../engine/storage/index.ts";
import {
  CRON_LIST, createCronSchedule, cronScheduleLimit, deleteCronSchedule, NEXT_FIRES, OVERLAP_POLICIES, previewFires, requireCronSchedule, updateCronSchedule,
} from "../../cron-schedules.ts";
import { keyActor } from "../auth.ts";
import { countParam, shapedBody } from "../body.ts";
import { empty, json } from "../http.ts";
import { requireTenantHeader, type RestContext } from "../route.ts";

const NO_TENANT = "cron schedules belong to one tenant: name it (X-Tenant-Id)";

/** Optional on the wire; `null` reads as absent. */
const nullish = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? undefined);

const CreateBody = z.object({
  tenant_id: z.string().refine((value) => value.trim() !== "", "tenant_id must not be blank"),
  namespace: nameString(),
  sequence_id: z.guid().transform((id) => id.toLowerCase()),
  cron_expr: z.string(),
  timezone: nullish(nameString()),
  metadata: z.unknown().default(null),
  enabled: nullish(z.boolean()),
  overlap_policy: nullish(z.enum(OVERLAP_POLICIES)),
});
type CreateBody = z.output<typeof CreateBody>;

const UpdateBody = z.object({
  cron_expr: nullish(z.string()),
  timezone: nullish(nameString()),
  enabled: nullish(z.boolean()),
  // null = unchanged, as for every field of the PUT.
  metadata: nullish(z.unknown()),
  overlap_policy: nullish(z.enum(OVERLAP_POLICIES)),
});
type UpdateBody = z.output<typeof UpdateBody>;

export const cronCreateBody = shapedBody(CreateBody, (body) => [body.tenant_id]);
export const cronUpdateBody = shapedBody(UpdateBody, () => []);

const time = (date: Date | null) => date?.toISOString() ?? null;

/** The audit log's record of a change made with this request's key. */
async function auditOf(context: RestContext<unknown>) {
  return { prisma: context.services.prisma, by: { actor: await keyActor(context.services.prisma, context.principal!) } };
}

export function wireCronSchedule(schedule: CronScheduleRecord) {
  return {
    id: schedule.id,
    tenant_id: schedule.tenantId,
    namespace: schedule.namespace,
    sequence_id: schedule.sequenceId,
    cron_expr: schedule.cronExpr,
    timezone: schedule.timezone,
    enabled: schedule.enabled,
    metadata: schedule.metadata ?? null,
    overlap_policy: schedule.overlapPolicy,
    skipped_fires: schedule.skippedFires,
    last_skipped_at: time(schedule.lastSkippedAt),
    last_triggered_at: time(schedule.lastTriggeredAt),
    next_fire_at: time(schedule.nextFireAt),
    created_at: schedule.createdAt.toISOString(),
    updated_at: schedule.updatedAt.toISOString(),
  };
}

export async function createCron(context: RestContext<CreateBody>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const body = context.body;
  const created = await createCronSchedule(store, await auditOf(context), {
    namespace: body.namespace, sequenceId: body.sequence_id, cronExpr: body.cron_expr, timezone: body.timezone ?? "UTC",
    enabled: body.enabled ?? true, metadata: body.metadata, overlapPolicy: body.overlap_policy ?? "allow",
  }, await cronScheduleLimit(context.services, store.tenantId));
  return json(201, { id: created.id, next_fire_at: time(created.nextFireAt) });
}

export async function listCron(context: RestContext<unknown>): Promise<Response> {
  const limit = Math.min(countParam(context.url.searchParams, "limit", CRON_LIST.default, 1), CRON_LIST.max);
  const store = requireTenantHeader(context, NO_TENANT);
  return json(200, (await store.listCronSchedules({ limit })).map(wireCronSchedule));
}

export async function getCron(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  return json(200, wireCronSchedule(await requireCronSchedule(store, context.params.id!)));
}

export async function updateCron(context: RestContext<UpdateBody>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const body = context.body;
  const updated = await updateCronSchedule(store, await auditOf(context), context.params.id!, {
    cronExpr: body.cron_expr, timezone: body.timezone, enabled: body.enabled, metadata: body.metadata, overlapPolicy: body.overlap_policy,
  });
  return json(200, wireCronSchedule(updated));
}

export async function deleteCron(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  await deleteCronSchedule(store, await auditOf(context), context.params.id!);
  return empty(204);
}

export async function cronNextFires(context: RestContext<unknown>): Promise<Response> {
  const n = countParam(context.url.searchParams, "n", NEXT_FIRES.default, 0);
  const schedule = await requireCronSchedule(requireTenantHeader(context, NO_TENANT), context.params.id!);
  return json(200, { timezone: schedule.timezone, fires: previewFires(schedule, n).map((date) => date.toISOString()) });
}

/** M: PATCH is not routed; its answer is 405 with the methods that are. */
export async function cronMethodNotAllowed(): Promise<Response> {
  return new Response(null, { status: 405, headers: { allow: "GET, PUT, DELETE" } });
}
