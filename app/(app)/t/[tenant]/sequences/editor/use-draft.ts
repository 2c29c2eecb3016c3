"use client";

// Autosave of the editor's work: every change goes to localStorage at once and to the server a
// moment later (sequenceDrafts). On opening, the newer of the two copies is restored when it
// differs from the version being edited; discarding drops both.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { useTRPC } from "../../../../../_components/trpc";
import {
  differsFrom, forgetLocalDiscard, newerDraft, outlivesDiscard, readLocalDiscard, readLocalDraft, writeLocalDiscard, writeLocalDraft, type StoredDraft,
} from "./draft-store.ts";
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
    // Read once per opening, never from an earlier opening's cache (the server copy may be newer now).
    staleTime: Infinity,
    gcTime: 0,
    refetchOnWindowFocus: false,
    retry: false,
  });
  const { mutate: saveOnServer } = useMutation(trpc.sequenceDrafts.save.mutationOptions());
  const { mutateAsync: discardOnServer } = useMutation(trpc.sequenceDrafts.discard.mutationOptions());
  const [restoredAt, setRestoredAt] = useState<string | null>(null);
  /** Set once the copies were looked at: nothing is written before, so the opened version cannot overwrite a draft. */
  const [decided, setDecided] = useState(false);
  /** The draft as restored: stored already, so its arrival in the editor is not an edit. */
  const restored = useRef<SequenceDoc | null>(null);
  /** Whether there are copies that a return to the opened version must drop. */
  const kept = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  /** The server copy waiting for typing to pause: sent at once if the editor goes away first. */
  const pending = useRef<{ tenantId: string; key: string; definition: never; updatedAt: string } | null>(null);
  const restore = useRef(onRestore);
  useEffect(() => {
    restore.current = onRestore;
  });

  /** Drops both copies: the browser's at once (marked as discarded), the server's when it answers. */
  const dropCopies = useCallback(async () => {
    const discardedAt = new Date().toISOString();
    writeLocalDiscard(tenantId, draftKey, discardedAt);
    await discardOnServer({ tenantId, key: draftKey }).then(() => forgetLocalDiscard(tenantId, draftKey, discardedAt), () => undefined);
  }, [tenantId, draftKey, discardOnServer]);

  useEffect(() => {
    if (decided || server.isPending) return;
    const serverCopy: StoredDraft | null = server.data ? { definition: server.data.definition as SequenceDoc, updatedAt: server.data.updatedAt } : null;
    const onServer = outlivesDiscard(serverCopy, readLocalDiscard(tenantId, draftKey));
    // A discard the server did not hear of (the page was left first): it is sent again.
    if (serverCopy && !onServer) void dropCopies();
    const draft = newerDraft(readLocalDraft(tenantId, draftKey), onServer);
    if (draft && differsFrom(draft.definition, initial)) {
      restored.current = draft.definition;
      kept.current = true;
      restore.current(draft.definition);
      setRestoredAt(draft.updatedAt);
    }
    setDecided(true);
  }, [decided, server.isPending, server.data, tenantId, draftKey, initial, dropCopies]);

  // Edits made while the copies were still being looked at are written as soon as that is done.
  useEffect(() => {
    if (!decided) return;
    if (doc === restored.current) {
      // Once: an undo back to it later is an edit like any other.
      restored.current = null;
      return;
    }
    if (timer.current) clearTimeout(timer.current);
    pending.current = null;
    if (!differsFrom(doc, initial)) {
      // Back to the version as opened (undo, discard): there is nothing to keep.
      if (kept.current) {
        kept.current = false;
        void dropCopies();
      }
      return;
    }
    const updatedAt = new Date().toISOString();
    writeLocalDraft(tenantId, draftKey, { definition: doc, updatedAt });
    kept.current = true;
    const save = { tenantId, key: draftKey, definition: doc as never, updatedAt };
    pending.current = save;
    timer.current = setTimeout(() => {
      pending.current = null;
      saveOnServer(save);
    }, SERVER_DELAY_MS);
  }, [decided, doc, initial, tenantId, draftKey, saveOnServer, dropCopies]);

  const latest = useRef({ doc, decided, initial, tenantId, draftKey });
  useEffect(() => {
    latest.current = { doc, decided, initial, tenantId, draftKey };
  });

  // Leaving before the pause: the server copy goes now rather than never. Leaving before the
  // copies were even looked at (a slow read): the edits made meanwhile are written now, as the
  // newest work, or they would be lost with the page.
  useEffect(() => {
    const flush = () => {
      if (timer.current) clearTimeout(timer.current);
      timer.current = null;
      const { doc: current, decided: looked, initial: opened, tenantId: tenant, draftKey: key } = latest.current;
      if (!pending.current && !looked && differsFrom(current, opened)) {
        const updatedAt = new Date().toISOString();
        writeLocalDraft(tenant, key, { definition: current, updatedAt });
        pending.current = { tenantId: tenant, key, definition: current as never, updatedAt };
      }
      if (pending.current) saveOnServer(pending.current);
      pending.current = null;
    };
    window.addEventListener("pagehide", flush);
    return () => {
      window.removeEventListener("pagehide", flush);
      flush();
    };
  }, [saveOnServer]);

  /** Drops both copies (after a save, or when the user discards). */
  const clear = useCallback(async () => {
    if (timer.current) clearTimeout(timer.current);
    pending.current = null;
    kept.current = false;
    await dropCopies();
  }, [dropCopies]);

  const discard = useCallback(() => {
    restore.current(initial);
    setRestoredAt(null);
    void clear();
  }, [initial, clear]);

  return { restoredAt, discard, clear, ready: decided };
}
