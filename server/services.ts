// The web process's long-lived dependencies, created once per process (and kept across hot
// reloads in development) rather than imported as globals deep in the code.
import { loadConfig, type EngineConfig } from "../engine/config.ts";
import { backendOptions, Storage, StorageBackends } from "../engine/storage/index.ts";
import { createPrisma, type Prisma } from "./db/prisma.ts";

export interface Services {
  config: EngineConfig;
  prisma: Prisma;
  storage: Storage;
}

const cache = globalThis as unknown as { bulkheadServices?: Services };

export function services(): Services {
  if (!cache.bulkheadServices) {
    const config = loadConfig();
    cache.bulkheadServices = {
      config,
      prisma: createPrisma(config.DATABASE_URL),
      storage: new Storage(new StorageBackends(config.backends, backendOptions(config))),
    };
  }
  return cache.bulkheadServices;
}
