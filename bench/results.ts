// bench/RESULTS.md: every benchmark replaces its own section there (between HTML comment markers,
// other sections kept as they are) with the exact command, the machine, the date and its figures.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";

export const RESULTS_FILE = path.join(import.meta.dirname, "RESULTS.md");

const HEADER = `# Benchmark results

Written by \`npm run bench -- <name>\`: each benchmark replaces its own section when it finishes.
Every figure in a section comes from one run, Bulkhead and its peer measured in that same run.
`;

export interface ResultTable {
  columns: string[];
  rows: (string | number)[][];
}

export interface BenchResult {
  /** The benchmark's name, as given to `npm run bench --`. */
  bench: string;
  /** One line: what was measured, and against what. */
  summary: string;
  tables: ResultTable[];
  notes?: string[];
  /** The server's version when the benchmark used PostgreSQL (see `postgresVersion`). */
  postgres?: string;
  /** performance.now() when the benchmark started, for its wall time. */
  startedAt: number;
}

/** The version string of the server behind `url`. */
export async function postgresVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
  } finally {
    await client.end();
  }
}

/** Internal variables that are not knobs of a run (set by a benchmark re-running itself). */
const INTERNAL = new Set(["BULKHEAD_BENCH_RESPAWNED", "BULKHEAD_BENCH_INVOKED"]);

/** The command as typed: the benchmark's env knobs (BENCH_*, BULKHEAD_BENCH_*) that were set, then npm. */
export function benchCommand(): string {
  const knobs = Object.entries(process.env)
    .filter(([name]) => (name.startsWith("BENCH_") || name.startsWith("BULKHEAD_BENCH_")) && !INTERNAL.has(name))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => `${name}=${/^[\w.,:/-]*$/.test(value ?? "") ? value : JSON.stringify(value)}`);
  const invoked = process.env.BULKHEAD_BENCH_INVOKED ?? process.argv[2] ?? "throughput";
  return [...knobs, "npm run bench --", invoked].join(" ");
}

export function machine(postgres?: string): string {
  const cpus = os.cpus();
  const ram = (os.totalmem() / 2 ** 30).toFixed(1);
  return [
    `${cpus.length} cores, ${cpus[0]?.model.trim() ?? "unknown CPU"}`, `${ram} GiB RAM`, `${os.type()} ${os.release()}`,
    `Node ${process.version}`, postgres ? `PostgreSQL ${postgres}` : "PostgreSQL not used",
  ].join("; ");
}

const cell = (value: string | number) => String(value).replace(/\|/g, "\\|").replace(/\n/g, " ");

function markdownTable(table: ResultTable): string {
  return [
    `| ${table.columns.map(cell).join(" | ")} |`,
    `|${table.columns.map(() => "---").join("|")}|`,
    ...table.rows.map((row) => `| ${row.map(cell).join(" | ")} |`),
  ].join("\n");
}

/** Replaces (or appends) the benchmark's section of bench/RESULTS.md. */
export function writeResults(result: BenchResult): void {
  const start = `<!-- bench:${result.bench} -->`;
  const end = `<!-- /bench:${result.bench} -->`;
  const seconds = (performance.now() - result.startedAt) / 1000;
  const section = [
    start,
    `## ${result.bench}`,
    "",
    result.summary,
    "",
    `- Command: \`${benchCommand()}\``,
    `- Machine: ${machine(result.postgres)}`,
    `- Date: ${new Date().toISOString().replace(/\.\d+Z$/, "Z")}; wall time ${seconds.toFixed(1)} s`,
    "",
    ...result.tables.flatMap((table) => [markdownTable(table), ""]),
    ...(result.notes?.length ? [...result.notes.map((note) => `- ${note}`), ""] : []),
    end,
  ].join("\n");

  const current = fs.existsSync(RESULTS_FILE) ? fs.readFileSync(RESULTS_FILE, "utf8") : HEADER;
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next = from >= 0 && to > from
    ? current.slice(0, from) + section + current.slice(to + end.length)
    : `${current.trimEnd()}\n\n${section}\n`;
  fs.writeFileSync(RESULTS_FILE, next);
  console.log(`(written to ${path.relative(process.cwd(), RESULTS_FILE)}, section "${result.bench}")`);
}
