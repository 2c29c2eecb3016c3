// Why an instance failed, read off its main tree when it fails: the first failed block at the top
// level, and inside a failed composite its first failed child, down to a step (a try_catch that
// recovered is completed, so a failure it caught is never the cause). And the fingerprint the
// Failed view groups by, so "order 4711 not found" and "order 4712 not found" are one group.
import type { Block } from "../sequence/schema.ts";
import type { FailureCause } from "../storage/index.ts";
import { childrenOf, type TreeCursor } from "./tree/state.ts";

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
/** 8 or more hex characters with a digit and a letter among them: a hash, a short id. */
const HEX = /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi;
const NUMBER = /\d+(\.\d+)?/g;
/** Long enough to tell messages apart, short enough for an index entry. */
const FINGERPRINT_MAX = 300;

/** The message with what varies between occurrences (ids, hex tokens of 8+, numbers) replaced. */
export function normalizeMessage(message: string): string {
  return message
    .replace(UUID, "<id>")
    .replace(HEX, "<hex>")
    .replace(NUMBER, "#")
    .replace(/\s+/g, " ")
    .trim();
}

export function fingerprintOf(handler: string | null, message: string): string {
  return `${handler ?? "engine"}: ${normalizeMessage(message)}`.slice(0, FINGERPRINT_MAX);
}

export function failureCause(cursor: TreeCursor, blocks: readonly Block[]): FailureCause | null {
  for (const block of blocks) {
    const state = cursor.nodes[block.id];
    if (state?.status !== "failed") continue;
    if (block.type === "step" || block.type === "sub_sequence") {
      const message = state.failure?.message ?? "failed";
      const handler = state.failure?.handler ?? (block.type === "step" ? block.handler : null);
      return { blockId: block.id, message, handler, fingerprint: fingerprintOf(handler, message) };
    }
    // A composite failed because of a child: the first failed one, at any depth.
    const inner = failureCause(cursor, childrenOf(block));
    if (inner) return inner;
    return { blockId: block.id, message: `${block.type} ${block.id} failed`, handler: null, fingerprint: fingerprintOf(null, `${block.type} failed`) };
  }
  return null;
}
