// Two versions side by side: their JSON, pretty-printed, as aligned rows of a line diff (jsdiff's
// diffLines). A changed line sits beside its replacement; an added or removed one faces a gap.
import { diffLines } from "diff";

export interface DiffRow {
  left: string | null;
  right: string | null;
  /** same: both sides equal; changed: both present and different; removed / added: one side only. */
  kind: "same" | "changed" | "removed" | "added";
}

const linesOf = (text: string) => text.replace(/\n$/, "").split("\n");

export function sideBySide(left: unknown, right: unknown): DiffRow[] {
  const parts = diffLines(`${JSON.stringify(left, null, 2)}\n`, `${JSON.stringify(right, null, 2)}\n`);
  const rows: DiffRow[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (!part.added && !part.removed) {
      for (const line of linesOf(part.value)) rows.push({ left: line, right: line, kind: "same" });
      continue;
    }
    const next = parts[i + 1];
    if (part.removed && next?.added) {
      const [gone, come] = [linesOf(part.value), linesOf(next.value)];
      for (let at = 0; at < Math.max(gone.length, come.length); at++) {
        const [l, r] = [gone[at] ?? null, come[at] ?? null];
        rows.push({ left: l, right: r, kind: l !== null && r !== null ? "changed" : l !== null ? "removed" : "added" });
      }
      i++;
      continue;
    }
    for (const line of linesOf(part.value)) rows.push(part.removed ? { left: line, right: null, kind: "removed" } : { left: null, right: line, kind: "added" });
  }
  return rows;
}
