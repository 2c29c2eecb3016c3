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

export function removeLocalDraft(tenantId: string, key: string): void {
  try {
    storage()?.removeItem(storageKey(tenantId, key));
  } catch {
    // Nothing to remove where storage is refused.
  }
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
