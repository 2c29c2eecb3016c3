"use client";

// Autosave of the editor's work: every change goes to localStorage at once and to the server a
// moment later (sequenceDrafts). On opening, the newer of the two copies is restored when it
// differs from the version being edited; discarding drops both.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { useTRPC } from "../../../../../_components/trpc";
import { differsFrom, newerDraft, readLocalDraft, removeLocalDraft, writeLocalDraft, type StoredDraft } from "./draft-store.ts";
import type { SequenceDoc } from "./model.ts";

/** How long the server copy waits for typing to pause. */
const SERVER_DELAY_MS = 800;

export interface DraftOptions {
  tenantId: string;
  draftKey: string;
  /** The version the editor opened. */
  initial: SequenceDoc;
  doc: SequenceDoc;
  /** Puts a definition in the editor (a restored draft, or `initial` after a discard). */
  onRestore(definition: SequenceDoc): void;
}

export function useDraft({ tenantId, draftKey, initial, doc, onRestore }: DraftOptions) {
  const trpc = useTRPC();
  const server = useQuery({
    ...trpc.sequenceDrafts.get.queryOptions({ tenantId, key: draftKey }),
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    retry: false,
  });
  const { mutate: saveOnServer } = useMutation(trpc.sequenceDrafts.save.mutationOptions());
  const { mutateAsync: discardOnServer } = useMutation(trpc.sequenceDrafts.discard.mutationOptions());
  const [restoredAt, setRestoredAt] = useState<string | null>(null);
  /** Set once the copies were looked at: nothing is written before, so the opened version cannot overwrite a draft. */
  const [decided, setDecided] = useState(false);
  /** The doc last seen by the autosave: the first one (as opened or restored) is not an edit. */
  const seen = useRef<SequenceDoc | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const restore = useRef(onRestore);
  useEffect(() => {
    restore.current = onRestore;
  });

  useEffect(() => {
    if (decided || server.isPending) return;
    const onServer: StoredDraft | null = server.data ? { definition: server.data.definition as SequenceDoc, updatedAt: server.data.updatedAt } : null;
    const draft = newerDraft(readLocalDraft(tenantId, draftKey), onServer);
    if (draft && differsFrom(draft.definition, initial)) {
      restore.current(draft.definition);
      setRestoredAt(draft.updatedAt);
    }
    setDecided(true);
  }, [decided, server.isPending, server.data, tenantId, draftKey, initial]);

  useEffect(() => {
    if (!decided) return;
    const before = seen.current;
    seen.current = doc;
    if (before === null || before === doc) return;
    if (timer.current) clearTimeout(timer.current);
    if (!differsFrom(doc, initial)) {
      // Back to the version as opened: there is nothing to keep.
      removeLocalDraft(tenantId, draftKey);
      void discardOnServer({ tenantId, key: draftKey }).catch(() => undefined);
      return;
    }
    const draft = { definition: doc, updatedAt: new Date().toISOString() };
    writeLocalDraft(tenantId, draftKey, draft);
    timer.current = setTimeout(() => saveOnServer({ tenantId, key: draftKey, definition: draft.definition as never, updatedAt: draft.updatedAt }), SERVER_DELAY_MS);
  }, [decided, doc, initial, tenantId, draftKey, saveOnServer, discardOnServer]);

  useEffect(() => () => {
    if (timer.current) clearTimeout(timer.current);
  }, []);

  /** Drops both copies (after a save, or when the user discards). */
  const clear = useCallback(async () => {
    if (timer.current) clearTimeout(timer.current);
    removeLocalDraft(tenantId, draftKey);
    await discardOnServer({ tenantId, key: draftKey }).catch(() => undefined);
  }, [tenantId, draftKey, discardOnServer]);

  const discard = useCallback(() => {
    restore.current(initial);
    setRestoredAt(null);
    void clear();
  }, [initial, clear]);

  return { restoredAt, discard, clear, ready: decided };
}
