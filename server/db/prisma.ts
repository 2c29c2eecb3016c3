// The Prisma client for the control plane (users, tenants, memberships, API keys, audit log) on
// the primary backend. Tenant data never goes through Prisma: see engine/storage.
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client.ts";

export type Prisma = PrismaClient;

export function createPrisma(databaseUrl: string): Prisma {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: 5 }) });
}
