// One tenant export as the CLI and the console's jobs run it: the tenant's name for the manifest,
// the files, and tenant.export.start / .done in the audit log.
import { AppError } from "../../engine/errors.ts";
import type { TenantStore } from "../../engine/storage/index.ts";
import { recordAudit } from "../control/audit.ts";
import type { Prisma as PrismaTypes } from "../db/generated/client.ts";
import type { Prisma } from "../db/prisma.ts";
import { prepareExportDirectory, writeTenantExport, type ExportManifest, type ExportProgress } from "./export.ts";

export interface ExportActor {
  actor: string;
  actorUserId?: string | null;
  /** More audit details (the console's job id). */
  details?: Record<string, string>;
}

export async function exportTenant(
  prisma: Prisma,
  store: TenantStore,
  dir: string,
  by: ExportActor | string,
  onProgress?: (progress: ExportProgress) => void,
): Promise<ExportManifest> {
  const { actor, actorUserId = null, details = {} } = typeof by === "string" ? { actor: by } : by;
  const tenant = await prisma.tenant.findUnique({ where: { id: store.tenantId }, select: { id: true, name: true } });
  if (!tenant) throw new AppError("not_found", "tenant not found");
  const audit = (action: string, more: PrismaTypes.InputJsonObject) =>
    recordAudit(prisma, { actor, actorUserId, tenantId: tenant.id, action, details: { ...details, ...more } });
  // Refused before anything is recorded: a directory in use is the caller's mistake, not an export.
  await prepareExportDirectory(dir);
  await audit("tenant.export.start", { backend: store.backendId });
  const manifest = await writeTenantExport(store, tenant, dir, onProgress);
  await audit("tenant.export.done", {
    backend: manifest.backend, snapshot_at: manifest.snapshot_at, rows: Object.fromEntries(manifest.files.map((f) => [f.name, f.rows])),
  });
  return manifest;
}

/** "sequences 3 · instances 1,200 · …": rows written so far, for a progress line. */
export function progressLine(progress: ExportProgress): string {
  return `exporting: ${progress.map((f) => `${f.name.replace(/\.ndjson$/, "")} ${f.rows.toLocaleString("en-US")}`).join(" · ")}`;
}

/** `report` at most every `ms` (the first at once); `flush` reports the latest one held back. */
export function throttled<T>(ms: number, report: (value: T) => void) {
  let last = -Infinity;
  let held: { value: T } | null = null;
  return {
    push(value: T) {
      const now = performance.now();
      if (now - last < ms) {
        held = { value };
        return;
      }
      last = now;
      held = null;
      report(value);
    },
    flush() {
      if (held) report(held.value);
      held = null;
    },
  };
}
