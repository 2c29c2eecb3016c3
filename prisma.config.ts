// Prisma CLI configuration (CLI only: the app never imports this file).
// Prisma 6.19.3 runs migrations through its WASM schema engine over @prisma/adapter-pg, so no
// native engine is downloaded. Each block below works around one known pitfall of that setup
// (see ../shared/notes/stack.md).
import { randomUUID } from "node:crypto";
import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";

// Prisma must resolve DATABASE_URL for every command, `generate` included, or it falls back to
// downloading a native engine. The default matches the embedded database of `npm start`.
process.env.DATABASE_URL ??= "postgresql://postgres:postgres@127.0.0.1:54329/bulkhead";

// The WASM engine leaves a ~10 s timer pending after migrate commands: unref long timers so the
// CLI exits as soon as its work is done.
const setTimeoutOriginal = globalThis.setTimeout;
globalThis.setTimeout = ((fn: (...args: unknown[]) => void, ms?: number, ...rest: unknown[]) => {
  const timer = setTimeoutOriginal(fn, ms, ...rest);
  if ((ms ?? 0) >= 5000) timer.unref();
  return timer;
}) as typeof setTimeout;

// prisma/orm#27403: adapter-pg cannot decode catalog columns typed `name` (19) or `"char"` (18),
// or their arrays (1003, 1002), which introspection reads. Report them as text (25) / text[] (1009).
const CATALOG_TYPE_AS_TEXT: Record<number, number> = { 18: 25, 19: 25, 1002: 1009, 1003: 1009 };
function reportCatalogTypesAsText<T>(queryable: T): T {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- patching adapter internals
  const q = queryable as any;
  const performIO = q.performIO?.bind(q);
  if (performIO) {
    q.performIO = async (...args: unknown[]) => {
      const result = await performIO(...args);
      for (const field of result.fields ?? []) {
        field.dataTypeID = CATALOG_TYPE_AS_TEXT[field.dataTypeID] ?? field.dataTypeID;
      }
      return result;
    };
  }
  const startTransaction = q.startTransaction?.bind(q);
  if (startTransaction) {
    q.startTransaction = async (...args: unknown[]) => reportCatalogTypesAsText(await startTransaction(...args));
  }
  return queryable;
}

// Discrete fields, never `connectionString`: a connection string overrides `database`, which
// would silently make the shadow database the main one.
function pgConfig(url: string, database?: string) {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: database ?? decodeURIComponent(u.pathname.slice(1)),
    allowExitOnIdle: true,
  };
}

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  migrations: { path: "migrations" },
  adapter: async () => {
    const url = process.env.DATABASE_URL!;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- patching adapter internals
    const factory = new PrismaPg(pgConfig(url)) as any;
    const connect = factory.connect.bind(factory);
    factory.connect = async () => reportCatalogTypesAsText(await connect());
    // adapter-pg drops the shadow database while its own pool still holds it open; close the
    // shadow pool first, then drop with FORCE.
    factory.connectToShadowDb = async () => {
      const admin = await factory.connect();
      const name = `prisma_shadow_${randomUUID().replace(/-/g, "")}`;
      await admin.executeScript(`CREATE DATABASE "${name}"`);
      const shadow = reportCatalogTypesAsText(await new PrismaPg(pgConfig(url, name)).connect());
      const dispose = shadow.dispose.bind(shadow);
      shadow.dispose = async () => {
        await dispose();
        await admin.executeScript(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await admin.dispose();
      };
      return shadow;
    };
    return factory;
  },
});
