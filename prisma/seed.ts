// Demo data for the first start: three tenants, an operator, an admin and a member per tenant,
// a few sample sequences and runs of them. Runs only on an empty database (no users, no tenants).
import { randomUUID } from "node:crypto";
import type { EngineConfig } from "../engine/config.ts";
import type { Storage } from "../engine/storage/index.ts";
import { createTenant } from "../server/control/tenants.ts";
import { addMember, createUser } from "../server/control/users.ts";
import type { Prisma } from "../server/db/prisma.ts";

export const DEMO_PASSWORD = "bulkhead-demo";

export const DEMO_TENANTS = [
  { slug: "acme", name: "Acme Corporation" },
  { slug: "globex", name: "Globex" },
  // On the second backend when one is registered (npm start's embedded cluster has `eu-1`), so
  // the demo shows placement; on the default backend otherwise.
  { slug: "initech", name: "Initech", backend: "eu-1" },
] as const;

export const DEMO_OPERATOR = "operator@bulkhead.test";

export function demoLogins(): { email: string; role: string }[] {
  return [
    { email: DEMO_OPERATOR, role: "platform operator" },
    ...DEMO_TENANTS.flatMap((t) => [
      { email: `admin@${t.slug}.test`, role: `admin of ${t.slug}` },
      { email: `member@${t.slug}.test`, role: `member of ${t.slug}` },
    ]),
  ];
}

function sampleSequences(tenantId: string) {
  const step = (id: string, handler: string, params: unknown) => ({ type: "step", id, handler, params });
  return [
    {
      name: "welcome-email",
      blocks: [step("greet", "log", { message: "Welcome aboard, {{ context.data.name }}!" }), step("pause", "sleep", { duration_ms: 500 }), step("done", "log", { message: "sent" })],
    },
    {
      name: "nightly-report",
      blocks: [step("collect", "noop", null), step("summarise", "log", { message: "report ready", level: "info" })],
    },
  ].map((s) => ({
    id: randomUUID(),
    tenant_id: tenantId,
    namespace: "default",
    name: s.name,
    version: 1,
    created_at: new Date().toISOString(),
    blocks: s.blocks,
  }));
}

/** Seeds the demo when the database has no users yet; returns whether it did. */
export async function seedDemo(prisma: Prisma, storage: Storage, config: EngineConfig): Promise<boolean> {
  if ((await prisma.user.count()) > 0 || (await prisma.tenant.count()) > 0) return false;
  await createUser(prisma, { email: DEMO_OPERATOR, password: DEMO_PASSWORD, name: "Olivia Operator", isOperator: true });
  for (const tenant of DEMO_TENANTS) {
    const backendId = "backend" in tenant && config.backends.has(tenant.backend) ? tenant.backend : config.BULKHEAD_DEFAULT_BACKEND;
    // The placement is created with the tenant, so the writes below go through the router to it.
    await createTenant(prisma, { slug: tenant.slug, name: tenant.name, backendId });
    for (const role of ["admin", "member"] as const) {
      const email = `${role}@${tenant.slug}.test`;
      await createUser(prisma, { email, password: DEMO_PASSWORD, name: `${tenant.name} ${role}` });
      await addMember(prisma, { tenantId: tenant.slug, email, role });
    }
    const store = await storage.tenant(tenant.slug);
    for (const sequence of sampleSequences(tenant.slug)) {
      await store.insertSequence({ ...sequence, definition: sequence, createdAt: new Date(sequence.created_at) });
    }
    // A few runs of the welcome sequence, so the dashboard has something to show once the
    // engine has picked them up.
    const welcome = (await store.listSequences()).find((s) => s.name === "welcome-email")!;
    await store.createInstances(
      ["Ada", "Grace", "Linus"].map((name) => ({
        namespace: "default", sequenceId: welcome.id, priority: 1, context: { data: { name }, config: null, audit: [], runtime: {} },
        nextFireAt: null, timezone: "UTC", metadata: null, idempotencyKey: null, concurrencyKey: null, maxConcurrency: null,
        budget: null, dryRun: false,
      })),
    );
  }
  return true;
}
