// Where the resource ledger's table sits in README.md.
import path from "node:path";

export const README_PATH = path.resolve(import.meta.dirname, "..", "README.md");
const START = "<!-- ledger: generated from engine/resources/ledger.ts by `npm run ledger` -->";
const END = "<!-- ledger end -->";

/** The README with `table` between the markers (which must be there). */
export function withLedger(readme: string, table: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md needs the lines ${START} and ${END}`);
  return `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`;
}
