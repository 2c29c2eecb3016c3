// The web server of the e2e suite (playwright.config.ts sets PORT, BULKHEAD_DATA_DIR and
// BULKHEAD_PG_PORT): a fresh database every run, so the demo data is seeded, then `npm start`.
import fs from "node:fs";
import path from "node:path";
import { DATA_DIR, usableDataDir } from "../scripts/database.ts";

if (path.basename(DATA_DIR) !== "e2e") throw new Error(`refusing to delete ${DATA_DIR}: not an e2e data directory`);
// As root the cluster may live under the temp dir instead (see usableDataDir): remove both.
fs.rmSync(usableDataDir(path.join(DATA_DIR, "pg")), { recursive: true, force: true });
fs.rmSync(DATA_DIR, { recursive: true, force: true });

await import("../scripts/start.ts");
