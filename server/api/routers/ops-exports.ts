// Tenant exports for operators (issue 23): start one, run in the background of this web process,
// and list a tenant's latest with their progress and, once done, their files to download.
import { z } from "zod";
import { EXPORT_FILES } from "../../../engine/storage/index.ts";
import { MANIFEST_FILE } from "../../lifecycle/export.ts";
import { listExportJobs, startExportJob, type ExportJob } from "../../lifecycle/export-jobs.ts";
import { operatorTenantProcedure, router } from "../trpc.ts";

/** The download route of one file of a finished export (app/api/ops/exports/[id]/[file]). */
const downloadHref = (id: string, file: string) => `/api/ops/exports/${id}/${file}`;

const withDownloads = (job: ExportJob) => ({
  ...job,
  downloads: job.status === "done" ? [...EXPORT_FILES, MANIFEST_FILE].map((name) => ({ name, href: downloadHref(job.id, name) })) : [],
});

export const opsExportsRouter = router({
  /**
   * Starts an export of the tenant (NOT_FOUND: no such tenant); CONFLICT while one is running.
   * Refused like a write while the tenant is being moved: its rows are about to change backend.
   */
  start: operatorTenantProcedure.mutation(async ({ ctx }) =>
    withDownloads(await startExportJob(ctx.services, ctx.storeForWrite(), { email: ctx.user.email, id: ctx.user.id })),
  ),

  /** The tenant's latest exports, newest first; a running one's row moves every second. */
  list: operatorTenantProcedure
    .input(z.object({ limit: z.int().min(1).max(50).default(5) }))
    .query(async ({ ctx, input }) => (await listExportJobs(ctx.services, input.tenantId, input.limit)).map(withDownloads)),
});
