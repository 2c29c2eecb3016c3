// The console's tenant exports: a job recorded in tenant_exports (primary) and run in the
// background of the web process that started it, writing its progress to the row as it goes. A
// process that dies leaves its row "running" with an updated_at that no longer moves: after
// STALE_MS it reads as interrupted, and the tenant can be exported again.
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { AppError } from "../../engine/errors.ts";
import { createLogger } from "../../engine/logger.ts";
import type { TenantStore } from "../../engine/storage/index.ts";
import type { Prisma as PrismaTypes } from "../db/generated/client.ts";
import type { Services } from "../services.ts";
import { MANIFEST_FILE, type ExportedFile, type ExportProgress } from "./export.ts";
import { exportTenant } from "./export-tenant.ts";

const log = createLogger("web", process.env.BULKHEAD_LOG_LEVEL ?? "info");

/** How often a running job writes its progress (and so shows it is alive). */
export const PROGRESS_WRITE_MS = 1_000;
/** A running job whose row has not moved for this long was in a process that stopped. */
export const STALE_MS = 30_000;

export type ExportStatus = "running" | "done" | "failed" | "interrupted";

export interface ExportJob {
  id: string;
  tenantId: string;
  requestedBy: string;
  status: ExportStatus;
  /** Rows so far per file while running; once done, each file with its size and checksum. */
  files: (ExportProgress[number] & Partial<Omit<ExportedFile, "name" | "rows">>)[];
  backend: string | null;
  snapshotAt: string | null;
  error: string | null;
  startedAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

interface StoredProgress {
  files?: ExportJob["files"];
  backend?: string;
  snapshot_at?: string;
}

/** The directory every export of this process goes under, one directory per job id. */
export function exportRoot(config: Services["config"]): string {
  return path.resolve(config.BULKHEAD_EXPORT_DIR || path.join(config.BULKHEAD_DATA_DIR, "exports"));
}

type Row = Awaited<ReturnType<Services["prisma"]["tenantExport"]["findMany"]>>[number];

function toJob(row: Row, now: number): ExportJob {
  const progress = (row.progress ?? {}) as StoredProgress;
  const interrupted = row.status === "running" && now - row.updatedAt.getTime() > STALE_MS;
  return {
    id: row.id,
    tenantId: row.tenantId,
    requestedBy: row.requestedBy,
    status: interrupted ? "interrupted" : (row.status as ExportStatus),
    files: progress.files ?? [],
    backend: progress.backend ?? null,
    snapshotAt: progress.snapshot_at ?? null,
    error: interrupted ? "interrupted: the web process running it stopped" : row.error,
    startedAt: row.startedAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

/** The tenant's latest exports, newest first. */
export async function listExportJobs(services: Services, tenantId: string, limit: number): Promise<ExportJob[]> {
  const rows = await services.prisma.tenantExport.findMany({ where: { tenantId }, orderBy: [{ startedAt: "desc" }, { id: "asc" }], take: limit });
  const now = Date.now();
  return rows.map((row) => toJob(row, now));
}

/** A finished export's tenant and directory, or null: no such export, or not done. */
export async function finishedExport(services: Services, id: string): Promise<{ tenantId: string; dir: string } | null> {
  const row = await services.prisma.tenantExport.findUnique({ where: { id }, select: { status: true, dir: true, tenantId: true } });
  return row?.status === "done" ? { tenantId: row.tenantId, dir: row.dir } : null;
}

/**
 * Records an export of the tenant `store` is routed to and starts it in the background; CONFLICT
 * while another export of the tenant is running. An interrupted one is closed as failed first.
 */
export async function startExportJob(services: Services, store: TenantStore, by: { email: string; id: string }): Promise<ExportJob> {
  const { prisma } = services;
  const id = randomUUID();
  const dir = path.join(exportRoot(services.config), id);
  const row = await prisma.$transaction(async (tx) => {
    // One start per tenant at a time, so two operators' clicks cannot both see none running.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('tenant_export'), hashtext(${store.tenantId}))`;
    const staleBefore = new Date(Date.now() - STALE_MS);
    const running = await tx.tenantExport.findFirst({ where: { tenantId: store.tenantId, status: "running", updatedAt: { gte: staleBefore } } });
    if (running) throw new AppError("conflict", "an export of this tenant is already running");
    await tx.tenantExport.updateMany({
      where: { tenantId: store.tenantId, status: "running" },
      data: { status: "failed", error: "interrupted: the web process running it stopped", finishedAt: new Date() },
    });
    return tx.tenantExport.create({ data: { id, tenantId: store.tenantId, requestedBy: by.email, dir } });
  });
  void runExportJob(services, store, row.id, dir, by);
  return toJob(row, Date.now());
}

async function runExportJob(services: Services, store: TenantStore, id: string, dir: string, by: { email: string; id: string }): Promise<void> {
  const { prisma } = services;
  /** Writes to the row while it is still this job's to write (running). */
  const write = (data: PrismaTypes.TenantExportUpdateManyMutationInput) =>
    prisma.tenantExport.updateMany({ where: { id, status: "running" }, data: { ...data, updatedAt: new Date() } });

  let latest: ExportProgress = [];
  let writing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    // Also a heartbeat: written every tick, changed or not, so a live job never reads as stale.
    writing = writing.then(() => write({ progress: { files: latest } })).catch((error: unknown) => log.warn({ err: error, export_id: id }, "export progress not recorded"));
  }, PROGRESS_WRITE_MS);
  try {
    const manifest = await exportTenant(prisma, store, dir, { actor: by.email, actorUserId: by.id, details: { export_id: id } }, (progress) => {
      latest = progress;
    });
    clearInterval(timer);
    await writing;
    await write({
      status: "done", finishedAt: new Date(),
      progress: { files: manifest.files.map((file) => ({ ...file })), backend: manifest.backend, snapshot_at: manifest.snapshot_at },
    });
  } catch (error) {
    clearInterval(timer);
    await writing;
    const message = error instanceof AppError ? error.message : "the export failed; the web server's log has the cause";
    if (!(error instanceof AppError)) log.error({ err: error, export_id: id, tenant_id: store.tenantId }, "tenant export failed");
    await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
    await write({ status: "failed", error: message, finishedAt: new Date(), progress: { files: latest } }).catch(() => {});
  }
}

/** The files a finished export offers for download: its NDJSON files and the manifest. */
export const isExportFileName = (name: string, files: readonly string[]) => name === MANIFEST_FILE || files.includes(name);
