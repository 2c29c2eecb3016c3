// Where an instance stands in its sequence, stored with it (task_instances.cursor) so a restart
// resumes exactly there. This is the cursor of flat sequences (top-level steps only); composite
// blocks will extend it with a frame per open block.
import { z } from "zod";

export const FlatCursor = z.object({
  v: z.literal(1),
  /** Index of the current top-level block. */
  index: z.number().int().min(0),
  /** 0-based attempt of the current step. */
  attempt: z.number().int().min(0),
  /** When the instance reached the current step: a step `delay` counts from here. */
  reachedAt: z.iso.datetime(),
  /** When the current step first ran: its `deadline` counts from here, across retries. */
  startedAt: z.iso.datetime().nullable(),
});
export type FlatCursor = z.infer<typeof FlatCursor>;

export function startOfSequence(now: Date): FlatCursor {
  return { v: 1, index: 0, attempt: 0, reachedAt: now.toISOString(), startedAt: null };
}

/** The stored cursor, or the start of the sequence for an instance that never ran. */
export function readCursor(stored: unknown, now: Date): FlatCursor {
  if (stored === null || stored === undefined) return startOfSequence(now);
  return FlatCursor.parse(stored);
}

export function nextStep(cursor: FlatCursor, now: Date): FlatCursor {
  return { v: 1, index: cursor.index + 1, attempt: 0, reachedAt: now.toISOString(), startedAt: null };
}
