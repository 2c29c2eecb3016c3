// Downloads of a finished export's files (/api/ops/exports/<id>/<file>), for operators only.
// proxy.ts asks exportDownloadAllowed first and serves anyone else, an id no finished export has
// and a file it does not offer the not-found document of a path no route matches, so the route
// tells nobody else that it, or an export, exists; the route handler checks again as it streams.
import { createReadStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { UUID_PATTERN } from "../../engine/model.ts";
import { EXPORT_FILES } from "../../engine/storage/index.ts";
import { auth } from "../auth/index.ts";
import { identityOf, readSessionUser, type SessionIdentity } from "../auth/sessions.ts";
import { services, type Services } from "../services.ts";
import { MANIFEST_FILE } from "./export.ts";
import { finishedExport, isExportFileName } from "./export-jobs.ts";

export const EXPORT_DOWNLOADS = "/api/ops/exports/";
const DOWNLOAD_PATH = /^\/api\/ops\/exports\/([^/]+)\/([^/]+)$/;

/** The finished export's file the caller may download, or null. */
async function downloadable(services: Services, identity: SessionIdentity | null, id: string, file: string) {
  const user = await readSessionUser(services.prisma, identity);
  if (!user?.isOperator || !UUID_PATTERN.test(id) || !isExportFileName(file, EXPORT_FILES)) return null;
  const job = await finishedExport(services, id.toLowerCase());
  if (!job) return null;
  const full = path.join(job.dir, file);
  const size = await fs.stat(full).then((s) => s.size, () => null);
  return size === null ? null : { tenantId: job.tenantId, full, size }; // null: deleted from the disk since
}

/** Whether the path under EXPORT_DOWNLOADS names a file the caller may download. */
export async function exportDownloadAllowed(services: Services, identity: SessionIdentity | null, pathname: string): Promise<boolean> {
  const match = DOWNLOAD_PATH.exec(pathname);
  return match !== null && (await downloadable(services, identity, match[1]!, match[2]!)) !== null;
}

/** The file as an attachment, or null (the route then answers as a missing one). */
export async function exportFileResponse(id: string, file: string): Promise<Response | null> {
  const found = await downloadable(services(), identityOf(await auth()), id, file);
  if (!found) return null;
  return new Response(Readable.toWeb(createReadStream(found.full)) as ReadableStream<Uint8Array>, {
    headers: {
      "content-type": file === MANIFEST_FILE ? "application/json" : "application/x-ndjson",
      "content-length": String(found.size),
      // Tenant ids are slugs and file names come from the fixed list: nothing to escape.
      "content-disposition": `attachment; filename="${found.tenantId}-${file}"`,
      "cache-control": "no-store",
    },
  });
}
