// Entry of `npm run bulkhead -- <command>`: opens the same database `npm start` uses (attaching
// to the embedded one if it is already running), runs one command, and exits with its status.
import { loadConfig } from "../engine/config.ts";
import { Storage, StorageBackends } from "../engine/storage/index.ts";
import { runCli, USAGE } from "../server/cli/commands.ts";
import { createPrisma } from "../server/db/prisma.ts";
import { openBulkheadDatabase } from "./database.ts";

const argv = process.argv.slice(2);
if (argv.length === 0 || argv[0] === "--help" || argv[0] === "help") {
  console.log(USAGE);
  process.exit(argv.length === 0 ? 1 : 0);
}

const db = await openBulkheadDatabase((line) => console.error(line));
// The backends `npm start` gives its processes, the embedded cluster's second database included.
const config = loadConfig({ ...process.env, DATABASE_URL: db.url, BULKHEAD_BACKENDS: db.backends });
const prisma = createPrisma(db.url);
const storage = new Storage(new StorageBackends(config.backends, { poolSize: 2 }));
let status = 1;
try {
  // A progress line is rewritten in place on a terminal, and ended before anything else prints.
  let progressShown = false;
  const endProgress = () => {
    if (progressShown) process.stderr.write("\n");
    progressShown = false;
  };
  const progress = (line: string) => {
    if (process.stderr.isTTY) {
      process.stderr.write(`\r\x1b[2K${line}`);
      progressShown = true;
    } else {
      process.stderr.write(`${line}\n`);
    }
  };
  const print = (line: string) => {
    endProgress();
    console.log(line);
  };
  const printError = (line: string) => {
    endProgress();
    console.error(line);
  };
  status = await runCli(argv, { prisma, storage, config, print, progress }, printError);
} finally {
  await Promise.all([prisma.$disconnect(), storage.close()]);
  await db.stop();
}
process.exit(status);
