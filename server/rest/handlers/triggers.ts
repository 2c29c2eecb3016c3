// Triggers over REST (wire-format L): create (201), list (oldest first), read, delete (204),
// fire with the shared secret (201), and the public signed webhook (202). There is no update:
// PUT and PATCH answer 405, as Orch8 routes neither. Another tenant's slug is a slug this tenant
// does not have: the same 404.
import { z } from "zod";
import { AppError } from "../../../engine/errors.ts";
import type { TriggerRecord } from "../../../engine/storage/index.ts";
import { createTrigger, fire, removeTrigger, TriggerInput, triggerNotFound } from "../../triggers.ts";
import { clientAddress, parseTrustedProxies } from "../../web/client-address.ts";
import {
  checkSignature, NONCE_TTL_SECS, sameSecret, tenantWebhookRate, WEBHOOK_BODY_LIMIT, webhookRates,
} from "../../webhooks.ts";
import { keyActor } from "../auth.ts";
import { countParam, parseJson, readBytes, readJson, shapedBody } from "../body.ts";
import { empty, json } from "../http.ts";
import { requireTenantHeader, type RestContext } from "../route.ts";

const NO_TENANT = "an operator key must name the tenant in X-Tenant-Id";

const TriggerBody = TriggerInput.extend({ tenant_id: z.string().optional() });
type TriggerBody = z.output<typeof TriggerBody>;

export const triggerBody = shapedBody(TriggerBody, (body) => [body.tenant_id]);

/** `TriggerDef`: `version` omitted when unpinned, `secret` redacted when set and omitted when not. */
export function wireTrigger(tenantId: string, trigger: TriggerRecord) {
  return {
    slug: trigger.slug,
    sequence_name: trigger.sequenceName,
    ...(trigger.sequenceVersion === null ? {} : { version: trigger.sequenceVersion }),
    tenant_id: tenantId,
    namespace: trigger.namespace,
    enabled: trigger.enabled,
    ...(trigger.hasSecret ? { secret: "[REDACTED]" } : {}),
    trigger_type: trigger.triggerType,
    config: trigger.config,
    created_at: trigger.createdAt.toISOString(),
    updated_at: trigger.updatedAt.toISOString(),
  };
}

const LIST_LIMIT = 100;
const LIST_MAX = 1000;

export async function listTriggers(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const limit = Math.min(countParam(context.url.searchParams, "limit", LIST_LIMIT, 1), LIST_MAX);
  return json(200, (await store.listTriggers(limit)).map((trigger) => wireTrigger(store.tenantId, trigger)));
}

export async function getTrigger(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const trigger = await store.getTrigger(context.params.slug!);
  if (!trigger) throw triggerNotFound(context.params.slug!);
  return json(200, wireTrigger(store.tenantId, trigger));
}

export async function postTrigger(context: RestContext<TriggerBody>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const by = { actor: await keyActor(context.services.prisma, context.principal!) };
  return json(201, wireTrigger(store.tenantId, await createTrigger(context.services, store, by, context.body)));
}

export async function deleteTrigger(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const by = { actor: await keyActor(context.services.prisma, context.principal!) };
  if (!(await removeTrigger(context.services, store, by, context.params.slug!))) throw triggerNotFound(context.params.slug!);
  return empty(204);
}

/** PUT and PATCH of a trigger: not routed by Orch8 (405); delete and create again instead. */
export async function methodNotAllowed(): Promise<Response> {
  return new Response(null, { status: 405, headers: { allow: "GET,HEAD,DELETE" } });
}

const unauthorized = () => json(401, { error: "unauthorized" });

/** POST /triggers/{slug}/fire: any JSON becomes context.data; `x-trigger-secret` when the trigger has a secret. */
export async function fireTrigger(context: RestContext<unknown>): Promise<Response> {
  const store = requireTenantHeader(context, NO_TENANT);
  const slug = context.params.slug!;
  const found = await store.triggerForFiring(slug);
  if (!found) throw triggerNotFound(slug);
  const { trigger, secret } = found;
  if (!trigger.enabled) throw new AppError("invalid_argument", `trigger '${slug}' is disabled`);
  if (secret !== null && !sameSecret(context.request.headers.get("x-trigger-secret"), secret)) {
    await store.recordDelivery(slug, { source: "fire", status: 401, outcome: "wrong or missing x-trigger-secret", instanceId: null });
    return unauthorized();
  }
  const data = await readJson(context.request);
  const fired = await fire(store, trigger, data, { source: "http_fire" }, "fire", 201);
  return json(201, { instance_id: fired.instanceId, trigger: slug, sequence_name: fired.sequenceName });
}

/**
 * POST /webhooks/{slug}, public. The checks run in the specified order, the first failure decides:
 * rate per (address, slug), the trigger (a webhook, enabled), the tenant's webhook rate (Bulkhead),
 * a secret, the timestamp, the nonce's shape, the signature, the nonce's single use, the JSON.
 */
export async function receiveWebhook(context: RestContext<unknown>): Promise<Response> {
  const { services, request } = context;
  const slug = context.params.slug!;
  const rates = webhookRates(services);
  rates.admitAddress(clientAddress(request.headers, parseTrustedProxies(services.config.BULKHEAD_TRUSTED_PROXIES)), slug);
  const missing = () => new AppError("not_found", `webhook '${slug}'`);
  const store = await services.storage.triggerOwner(slug);
  const found = store ? await store.triggerForFiring(slug) : null;
  if (!store || !found || found.trigger.triggerType !== "webhook" || !found.trigger.enabled) throw missing();
  rates.admitTenant(store.tenantId, await tenantWebhookRate(services, store.tenantId));
  const { trigger, secret } = found;
  const refuse = async (outcome: string) => {
    await store.recordDelivery(slug, { source: "webhook", status: 401, outcome, instanceId: null });
    return unauthorized();
  };
  if (!secret) return refuse("the trigger has no secret");
  const body = await readBytes(request, WEBHOOK_BODY_LIMIT);
  const check = checkSignature(request.headers, body, secret, Math.floor(Date.now() / 1000));
  if (!check.ok) return refuse(check.reason);
  if (!(await store.claimWebhookNonce(slug, check.nonce, NONCE_TTL_SECS))) return refuse("nonce already used");
  let data: unknown;
  try {
    data = parseJson(body, (problem) => new AppError("invalid_argument", `invalid webhook JSON: ${problem}`));
  } catch (error) {
    await store.recordDelivery(slug, { source: "webhook", status: 400, outcome: "invalid JSON", instanceId: null });
    throw error;
  }
  const event = { source: "public_webhook" as const, user_agent: request.headers.get("user-agent") ?? "" };
  const fired = await fire(store, trigger, data, event, "webhook", 202);
  return json(202, { instance_id: fired.instanceId, trigger: slug });
}
