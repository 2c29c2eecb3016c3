// Writes a tenant's export (issue 23) into a directory: one NDJSON file per exported table,
// streamed as its rows are read, then manifest.json with each file's row count, size and SHA-256.
// The manifest is written last, so a directory with one holds a whole export.
import { createHash, type Hash } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { once } from "node:events";
import { AppError } from "../../engine/errors.ts";
import { EXPORT_FILES, type TenantStore } from "../../engine/storage/index.ts";

export const MANIFEST_FILE = "manifest.json";

export interface ExportedFile {
  name: string;
  rows: number;
  bytes: number;
  sha256: string;
}

export interface ExportManifest {
  tenant: { id: string; slug: string; name: string };
  exported_at: string;
  backend: string;
  snapshot_at: string;
  files: ExportedFile[];
}

/** Rows written so far, per file, in the files' order. */
export type ExportProgress = { name: string; rows: number }[];

/** One file being written: its stream, and what the manifest says of it, kept as bytes go out. */
class FileSink {
  private readonly hash: Hash = createHash("sha256");
  private readonly stream: WriteStream;
  rows = 0;
  bytes = 0;

  constructor(readonly name: string, dir: string) {
    this.stream = createWriteStream(path.join(dir, name), { flags: "wx" });
  }

  async write(lines: readonly string[]): Promise<void> {
    const chunk = Buffer.from(lines.map((line) => `${line}\n`).join(""), "utf8");
    this.hash.update(chunk);
    this.rows += lines.length;
    this.bytes += chunk.length;
    // Waits for the disk when the stream's buffer is full, so a large tenant is not held in memory.
    if (!this.stream.write(chunk)) await once(this.stream, "drain");
  }

  async close(): Promise<ExportedFile> {
    this.stream.end();
    await once(this.stream, "finish");
    return { name: this.name, rows: this.rows, bytes: this.bytes, sha256: this.hash.digest("hex") };
  }

  destroy(): void {
    this.stream.destroy();
  }
}

/** Creates `dir` (and its parents); refuses one that already holds anything. */
export async function prepareExportDirectory(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  const entries = await fs.readdir(dir);
  if (entries.length > 0) throw new AppError("invalid_argument", `${dir} is not empty: export into a new or empty directory`);
}

/**
 * Exports the tenant `store` is routed to into `dir`, reading from wherever it is placed.
 * `onProgress` is told the rows written per file after every page.
 */
export async function writeTenantExport(
  store: TenantStore,
  tenant: { id: string; name: string },
  dir: string,
  onProgress: (progress: ExportProgress) => void = () => {},
): Promise<ExportManifest> {
  await prepareExportDirectory(dir);
  const sinks = new Map(EXPORT_FILES.map((name) => [name, new FileSink(name, dir)]));
  const progress = () => [...sinks.values()].map((s) => ({ name: s.name, rows: s.rows }));
  try {
    const snapshotAt = await store.exportRows({
      rows: async (file, lines) => {
        await sinks.get(file)!.write(lines);
        onProgress(progress());
      },
    });
    const files: ExportedFile[] = [];
    for (const sink of sinks.values()) files.push(await sink.close());
    const manifest: ExportManifest = {
      tenant: { id: tenant.id, slug: tenant.id, name: tenant.name },
      exported_at: new Date().toISOString(),
      backend: store.backendId,
      snapshot_at: snapshotAt.toISOString(),
      files,
    };
    await fs.writeFile(path.join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { flag: "wx" });
    onProgress(progress());
    return manifest;
  } catch (error) {
    for (const sink of sinks.values()) sink.destroy();
    throw error;
  }
}
