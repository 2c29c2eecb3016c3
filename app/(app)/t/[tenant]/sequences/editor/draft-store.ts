// The browser's copy of an editor draft (localStorage, per tenant and edited version), and the
// comparison that says whether a sequence differs from a stored version. No React.
import { canonicalJson } from "./canonical-json.ts";
import type { SequenceDoc } from "./model.ts";

export interface StoredDraft {
  definition: SequenceDoc;
  /** When the draft was last edited (ISO 8601). */
  updatedAt: string;
}

/** The edited version's id, or for a sequence not saved yet the id it was given. */
export const draftKeyOf = (storedId: string | undefined, docId: unknown) => storedId ?? String(docId);

const storageKey = (tenantId: string, key: string) => `bulkhead:sequence-draft:${tenantId}:${key}`;

/** Storage may be missing or refuse (private mode, quota): a draft then lives on the server only. */
function storage(): Storage | null {
  try {
    return typeof window === "undefined" ? null : window.localStorage;
  } catch {
    return null;
  }
}

export function readLocalDraft(tenantId: string, key: string): StoredDraft | null {
  try {
    const raw = storage()?.getItem(storageKey(tenantId, key));
    if (!raw) return null;
    const parsed = JSON.parse(raw) as Partial<StoredDraft>;
    const definition = parsed.definition as unknown;
    if (typeof parsed.updatedAt !== "string" || typeof definition !== "object" || definition === null || !Array.isArray((definition as SequenceDoc).blocks)) return null;
    return { definition: definition as SequenceDoc, updatedAt: parsed.updatedAt };
  } catch {
    return null;
  }
}

export function writeLocalDraft(tenantId: string, key: string, draft: StoredDraft): void {
  try {
    storage()?.setItem(storageKey(tenantId, key), JSON.stringify(draft));
  } catch {
    // Over quota or refused: the server copy still holds it.
  }
}

// A discard leaves a mark in place of the browser's copy until the server confirms it dropped its
// own: a page left (or reloaded) while the discard was on its way would otherwise find the
// server's copy and restore what the user threw away.
const discardOf = (at: string) => JSON.stringify({ discardedAt: at });

export function writeLocalDiscard(tenantId: string, key: string, discardedAt: string): void {
  try {
    storage()?.setItem(storageKey(tenantId, key), discardOf(discardedAt));
  } catch {
    // Refused: the discard then rests on the server's answer alone.
  }
}

/** When this browser last discarded the draft, if the server has not confirmed it yet. */
export function readLocalDiscard(tenantId: string, key: string): string | null {
  try {
    const raw = storage()?.getItem(storageKey(tenantId, key));
    const at = raw ? (JSON.parse(raw) as { discardedAt?: unknown }).discardedAt : undefined;
    return typeof at === "string" ? at : null;
  } catch {
    return null;
  }
}

/** The server confirmed the discard made at `discardedAt`: the mark goes, unless an edit has replaced it. */
export function forgetLocalDiscard(tenantId: string, key: string, discardedAt: string): void {
  try {
    if (storage()?.getItem(storageKey(tenantId, key)) === discardOf(discardedAt)) storage()?.removeItem(storageKey(tenantId, key));
  } catch {
    // Nothing to forget where storage is refused.
  }
}

/** The server's copy, unless it is one a discard made later in this browser meant to drop. */
export function outlivesDiscard(onServer: StoredDraft | null, discardedAt: string | null): StoredDraft | null {
  if (!onServer || discardedAt === null) return onServer;
  return Date.parse(onServer.updatedAt) > Date.parse(discardedAt) ? onServer : null;
}

/** The later of two drafts (either may be missing). */
export function newerDraft(a: StoredDraft | null, b: StoredDraft | null): StoredDraft | null {
  if (!a || !b) return a ?? b;
  return Date.parse(b.updatedAt) > Date.parse(a.updatedAt) ? b : a;
}

/** Fields every save sets afresh, and the row's own columns: not part of what was edited. */
const NOT_EDITED = new Set(["id", "version", "created_at", "deprecated", "status"]);

/** Whether `doc` says something other than `version` does, leaving aside what a save mints. */
export function differsFrom(doc: SequenceDoc, version: SequenceDoc | null | undefined): boolean {
  if (!version) return true;
  const edited = (d: SequenceDoc) => canonicalJson(Object.fromEntries(Object.entries(d).filter(([k]) => !NOT_EDITED.has(k))));
  return edited(doc) !== edited(version);
}
