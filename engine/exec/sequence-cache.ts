// Parsed sequence definitions, each as one tenant's: the same id read for another tenant is
// another entry, so a cached definition never serves an instance of a tenant it is not stored
// under. A stored sequence version never changes, so a parsed copy stays valid for the life of
// the process; the cache only bounds how many are kept, the least recently used going first.
import { Sequence } from "../sequence/schema.ts";
import type { ClaimedRow } from "../storage/index.ts";

/** The cache's key of a tenant's sequence, as the claim statement builds it to leave out known definitions. */
export function sequenceKey(tenantId: string, sequenceId: string): string {
  return `${tenantId} ${sequenceId}`;
}

export class SequenceCache {
  private readonly entries = new Map<string, Sequence | null>();

  constructor(private readonly capacity = 1000) {}

  /** The parsed definition, or null when it is missing or not a valid sequence. */
  get(tenantId: string, sequenceId: string, definition: unknown): Sequence | null {
    const key = sequenceKey(tenantId, sequenceId);
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.entries.delete(key); // most recently used last
      this.entries.set(key, cached);
      return cached;
    }
    const parsed = definition === null ? null : Sequence.safeParse(definition);
    const value = parsed?.success ? parsed.data : null;
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    // A missing definition is not cached: the row may simply not be visible yet.
    if (definition !== null) this.entries.set(key, value);
    return value;
  }

  /** The keys of the `n` most recently used sequences: a claim need not send their definitions. */
  recent(n: number): string[] {
    const keys = [...this.entries.keys()];
    return keys.slice(Math.max(0, keys.length - n));
  }

  /**
   * The sequences of a claimed batch, in its order. Rows whose definitions the claim left out
   * (they were among `recent`) are read first, before a parse of another row may evict them.
   */
  resolve(rows: readonly ClaimedRow[]): (Sequence | null)[] {
    const known = rows.map((row) => (row.definition === null ? this.entries.get(sequenceKey(row.tenantId, row.sequenceId)) : undefined));
    return rows.map((row, i) => {
      const sequence = known[i];
      return sequence !== undefined ? sequence : this.get(row.tenantId, row.sequenceId, row.definition);
    });
  }
}
