// The approvals inbox, shared by REST GET /approvals (wire-format R) and the web app's Approvals
// page: the human-review gates of a tenant's waiting instances, read off each instance's tree by
// describeInstance, the same read instances.answer checks an answer against. Answering is not
// here: both doors answer through their existing signal path (REST POST /instances/{id}/signals,
// tRPC instances.answer), so it is the same gate and the same checks.
import { AppError } from "../engine/errors.ts";
import { UUID_PATTERN } from "../engine/model.ts";
import { describeInstance } from "../engine/read-model/describe-instance.ts";
import type { TenantStore, WaitingKey, WaitingTreeSource } from "../engine/storage/index.ts";

export interface ApprovalItem {
  instanceId: string;
  namespace: string;
  sequenceId: string;
  /** null when the sequence is gone. */
  sequenceName: string | null;
  blockId: string;
  handler: string;
  prompt: string;
  choices: { label: string; value: string }[];
  storeAs: string | null;
  timeoutMs: number | null;
  escalationHandler: string | null;
  /** The gate's node start; the instance's updated_at when the cursor does not say (R). */
  waitingSince: string;
  /** waitingSince + timeout; null without a timeout. */
  deadline: string | null;
  metadata: unknown;
  allowComment: boolean;
}

/** The gates one waiting instance has open (none when it waits on something else, a worker task say). */
export function approvalItems(source: WaitingTreeSource): ApprovalItem[] {
  return describeInstance(source.definition, source.cursor, source.instance).pendingInputs.map((gate) => {
    const waitingSince = gate.waitingSince ?? source.instance.updatedAt.toISOString();
    return {
      instanceId: source.instance.id,
      namespace: source.namespace,
      sequenceId: source.sequenceId,
      sequenceName: source.sequenceName,
      blockId: gate.blockId,
      handler: gate.handler,
      prompt: gate.prompt,
      choices: gate.choices.map(({ label, value }) => ({ label, value })),
      storeAs: gate.storeAs,
      timeoutMs: gate.timeoutMs,
      escalationHandler: gate.escalationHandler,
      waitingSince,
      deadline: gate.timeoutMs === null ? null : new Date(Date.parse(waitingSince) + gate.timeoutMs).toISOString(),
      metadata: source.metadata,
      allowComment: gate.allowComment,
    };
  });
}

// ------------------------------------------------------------------ the web app's keyset pages

/** Instances read for one page at most: waiting instances without a gate (on a worker task, say) are skipped, boundedly. */
export const APPROVAL_SCAN_MAX = 500;
const SCAN_BATCH = 100;

/** Opaque to clients: base64url of `<updated_at ms>.<id>`, the last instance the page before read. */
export function encodeApprovalCursor(key: WaitingKey): string {
  return Buffer.from(`${key.updatedAt.getTime()}.${key.id}`).toString("base64url");
}

export function decodeApprovalCursor(cursor: string): WaitingKey {
  const match = /^(\d{1,15})\.([0-9a-f-]{36})$/i.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match || !UUID_PATTERN.test(match[2]!)) throw new AppError("invalid_argument", "invalid cursor", ["cursor"]);
  return { updatedAt: new Date(Number(match[1])), id: match[2]! };
}

/**
 * At least `limit` gates (an instance's gates are never split across pages), most recently
 * updated instance first, after `after`; `next` is where the following page starts, null at the
 * end. Pages over instances, as R does, but keeps reading until the page has its gates or
 * APPROVAL_SCAN_MAX instances were read, so a tenant with many instances waiting on workers does
 * not get empty pages. Keyset rather than offset: answering a gate takes its instance out of
 * `waiting`, which would shift every offset after it.
 */
export async function listApprovalPage(
  store: Pick<TenantStore, "listWaitingTreeSources">,
  query: { sequenceId: string | null; after: WaitingKey | null; limit: number },
): Promise<{ items: ApprovalItem[]; next: WaitingKey | null }> {
  const items: ApprovalItem[] = [];
  let after = query.after;
  let scanned = 0;
  while (scanned < APPROVAL_SCAN_MAX) {
    const batch = Math.min(SCAN_BATCH, APPROVAL_SCAN_MAX - scanned);
    const sources = await store.listWaitingTreeSources({ namespace: null, sequenceId: query.sequenceId, after, offset: 0, limit: batch });
    for (const source of sources) {
      scanned += 1;
      items.push(...approvalItems(source));
      after = { updatedAt: source.instance.updatedAt, id: source.instance.id };
      if (items.length >= query.limit) return { items, next: after };
    }
    if (sources.length < batch) return { items, next: null };
  }
  return { items, next: after };
}
