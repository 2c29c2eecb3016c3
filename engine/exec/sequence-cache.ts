// Parsed sequence definitions by id. A stored sequence version never changes, so a parsed copy
// stays valid for the life of the process; the cache only bounds how many are kept.
import { Sequence } from "../sequence/schema.ts";

export class SequenceCache {
  private readonly entries = new Map<string, Sequence | null>();

  constructor(private readonly capacity = 1000) {}

  /** The parsed definition, or null when it is missing or not a valid sequence. */
  get(sequenceId: string, definition: unknown): Sequence | null {
    if (this.entries.has(sequenceId)) return this.entries.get(sequenceId)!;
    const parsed = definition === null ? null : Sequence.safeParse(definition);
    const value = parsed?.success ? parsed.data : null;
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    // A missing definition is not cached: the row may simply not be visible yet.
    if (definition !== null) this.entries.set(sequenceId, value);
    return value;
  }
}
