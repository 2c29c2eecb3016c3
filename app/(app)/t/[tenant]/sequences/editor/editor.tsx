"use client";

// The visual sequence editor: palette, canvas, inspector, JSON view, save (a new version) and run.
// The model is the sequence JSON exactly as it will be sent; the engine's own validator
// (checkSequence) runs on every change and its problems are pinned to the blocks they concern.
import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { checkSequence } from "../../../../../../engine/sequence/validate.ts";
import { armOfPath } from "../../../../../_components/sequence-graph/arms.ts";
import { useTRPC } from "../../../../../_components/trpc";
import { Canvas } from "./canvas";
import { differsFrom, draftKeyOf } from "./draft-store.ts";
import { whereOf, type Selection } from "./flow.ts";
import { BLOCK_TYPE_DRAG } from "./drop-target.ts";
import type { Insert } from "../../../../../_components/sequence-graph/layout.ts";
import { Inspector } from "./inspector";
import { keepFocusInside } from "./keep-focus.ts";
import { RunForm } from "./run-form";
import { useDraft } from "./use-draft.ts";
import { useUnsavedGuard } from "./unsaved-guard.ts";
import { templateHints } from "./template-hints.ts";
import {
  addBlock, addBranch, allBlocks, BLOCK_TYPES, blockPathOf, commit, getAt, indentBlock, isBlock, isSagaPart, listedPath, moveAfter, moveBlock, moveBlockTo,
  outdentBlock, pathKey, redo, removeBlock, removeBranch, samePath, slotsOf, startHistory, TREES, undo, updateBlock, updateSequence,
  type History, type JsonBlock, type Path, type SequenceDoc, type Tree,
} from "./model.ts";
import { SequenceSettings } from "./sequence-settings";
import { LocalTime } from "../../../../../_components/local-time";

export interface EditorProps {
  tenantId: string;
  initial: SequenceDoc;
  /** Set when editing a stored version: saving makes a new version of the same name. */
  stored?: { id: string; versions: { id: string; version: number; status: string }[] };
  /** The name's latest version when it is not `initial`: Save is offered only for something that differs from it. */
  latest?: SequenceDoc;
  /** The version just saved, confirmed until the next change. */
  savedVersion?: number;
}

const isTyping = (target: EventTarget) =>
  target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));

export function Editor({ tenantId, initial, stored, latest, savedVersion }: EditorProps) {
  const trpc = useTRPC();
  const router = useRouter();
  const ids = { name: useId(), namespace: useId(), version: useId(), json: useId() };
  const [history, setHistory] = useState<History>(() => startHistory(initial));
  const [selection, setSelection] = useState<Selection>(null);
  /** Bumped by changes not made in the inspector, so its drafts start over. */
  const [revision, setRevision] = useState(0);
  const [tab, setTab] = useState<"canvas" | "json">("canvas");
  /** The tree on the canvas and in the outline: the main one or a cleanup tree. */
  const [tree, setTree] = useState<Tree>("blocks");
  const [jsonDraft, setJsonDraft] = useState<string | null>(null);
  const [jsonError, setJsonError] = useState<string | null>(null);
  const doc = history.present;
  const root = useRef<HTMLDivElement>(null);

  const handlers = useQuery(trpc.sequences.handlers.queryOptions({ tenantId }));
  const check = useMemo(() => checkSequence(doc), [doc]);
  const { pinned, general } = useMemo(() => {
    const pinned = new Map<string, string[]>();
    const general: string[] = [];
    for (const problem of check.problems) {
      const at = blockPathOf(doc, problem.path);
      if (!at) general.push(problem.message);
      else pinned.set(pathKey(at), [...(pinned.get(pathKey(at)) ?? []), problem.message]);
    }
    return { pinned, general };
  }, [check, doc]);
  const valid = check.problems.length === 0;
  const named = String(doc.name ?? "").trim() !== "";
  /** Edited since opening: what leaving would lose (the draft keeps it). */
  const dirty = differsFrom(doc, initial);
  const changed = stored ? differsFrom(doc, latest ?? initial) : true;
  useUnsavedGuard(dirty);
  // "Saved vN" came in the address: said once, then dropped from it, so a reload does not say it again.
  useEffect(() => {
    if (savedVersion !== undefined) window.history.replaceState(null, "", window.location.pathname);
  }, [savedVersion]);
  const draft = useDraft({
    tenantId,
    draftKey: draftKeyOf(stored?.id, initial.id),
    initial,
    doc,
    onRestore: (definition) => {
      setHistory((h) => commit(h, definition));
      setSelection(null);
      setRevision((r) => r + 1);
      setJsonDraft(null);
    },
  });

  // Saving an edited version makes a new one: a fresh id and, unless the version was changed, the next number.
  const nextVersion = stored ? Math.max(...stored.versions.map((v) => v.version), Number(doc.version) || 0) + 1 : null;
  const toSend = (): SequenceDoc => {
    if (!stored || doc.id !== stored.id) return doc;
    const storedVersion = stored.versions.find((v) => v.id === stored.id)?.version;
    return { ...doc, id: newUuid(), created_at: new Date().toISOString(), version: doc.version === storedVersion ? nextVersion : doc.version };
  };
  const save = useMutation(
    trpc.sequences.create.mutationOptions({
      onSuccess: async ({ id }, { sequence }) => {
        await draft.clear();
        router.push(`/t/${tenantId}/sequences/${id}?saved=${encodeURIComponent(String((sequence as SequenceDoc).version))}`);
      },
    }),
  );

  // ---------------------------------------------------------------- changes

  const change = (next: SequenceDoc, select?: Selection, external = true) => {
    setHistory((h) => commit(h, next));
    if (select !== undefined) setSelection(select);
    if (external) setRevision((r) => r + 1);
    setJsonDraft(null);
  };
  const travel = (to: (h: History) => History) => {
    keepFocusInside(root.current);
    setHistory(to);
    setSelection(null);
    setRevision((r) => r + 1);
    setJsonDraft(null);
  };
  const selectedBlock = selection?.kind === "block" ? getAt(doc, selection.path) : undefined;
  const selectedPath = selection?.kind === "block" && isBlock(selectedBlock) ? selection.path : null;

  const add = (type: string) => {
    const where = selectedPath
      ? { after: selectedPath }
      : selection?.kind === "after"
        ? { after: selection.path }
        : selection?.kind === "slot"
          ? { into: selection.list }
          : selection?.kind === "insert"
            ? { into: selection.list, index: selection.index }
            : { into: [tree] };
    const added = addBlock(doc, type, where);
    change(added.doc, { kind: "block", path: added.path });
  };
  /** A block type dropped from the palette on a "+", an empty slot or the place after a composite. */
  const addAt = (type: string, insert: Insert) => {
    const added = addBlock(doc, type, { into: insert.list, index: insert.index });
    change(added.doc, { kind: "block", path: added.path });
  };
  const moveResult = (result: { doc: SequenceDoc; path: Path }) => change(result.doc, { kind: "block", path: result.path });
  const remove = (path: Path) => {
    keepFocusInside(root.current);
    change(removeBlock(doc, path), null);
  };
  const onDrop = (from: Path, target: Selection) => {
    if (!target) return;
    if (target.kind === "slot") return moveResult(moveBlockTo(doc, from, target.list, 0));
    if (target.kind === "insert") return moveResult(moveBlockTo(doc, from, target.list, target.index));
    // On a block or on the slot after a composite: it goes right after that block.
    if (!samePath(target.path, from)) moveResult(moveAfter(doc, from, target.path));
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const mod = event.ctrlKey || event.metaKey;
    if (mod && event.key.toLowerCase() === "z" && !isTyping(event.target)) {
      event.preventDefault();
      travel(event.shiftKey ? redo : undo);
      return;
    }
    if (mod && event.key.toLowerCase() === "y" && !isTyping(event.target)) {
      event.preventDefault();
      travel(redo);
      return;
    }
    if (!selectedPath || isTyping(event.target)) return;
    if (event.key === "Delete") {
      event.preventDefault();
      remove(selectedPath);
    } else if (event.altKey && event.key === "ArrowUp") {
      event.preventDefault();
      moveResult(moveBlock(doc, selectedPath, -1));
    } else if (event.altKey && event.key === "ArrowDown") {
      event.preventDefault();
      moveResult(moveBlock(doc, selectedPath, 1));
    } else if (event.altKey && event.key === "ArrowRight") {
      event.preventDefault();
      moveResult(indentBlock(doc, selectedPath));
    } else if (event.altKey && event.key === "ArrowLeft") {
      event.preventDefault();
      moveResult(outdentBlock(doc, selectedPath));
    }
  };

  const applyJson = () => {
    try {
      const parsed: unknown = JSON.parse(jsonDraft ?? "");
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || !Array.isArray((parsed as SequenceDoc).blocks)) {
        setJsonError("The JSON must be an object with a blocks array.");
        return;
      }
      setJsonError(null);
      change(parsed as SequenceDoc, null);
    } catch (e) {
      setJsonError(`Not valid JSON: ${(e as Error).message}`);
    }
  };

  // ---------------------------------------------------------------- rendering

  const outline = allBlocks(doc, tree);
  const showTree = (next: Tree) => {
    setTree(next);
    setSelection(null);
  };
  const afterBlock = selection?.kind === "after" ? getAt(doc, selection.path) : undefined;
  const whereLabel = selectedPath
    ? `after ${String((getAt(doc, listedPath(selectedPath)) as JsonBlock).id)}`
    : isBlock(afterBlock)
      ? `after ${afterBlock.id}`
      : selection?.kind === "slot"
      ? "into the selected empty list"
      : selection?.kind === "insert"
        ? whereOf(doc, selection)
        : tree === "blocks" ? "at the end" : `at the end of ${tree}`;

  return (
    <div className="seq-editor" ref={root} tabIndex={-1} onKeyDown={onKeyDown}>
      <div className="seq-meta form-row">
        <div className="field">
          <label htmlFor={ids.name}>Name</label>
          <input id={ids.name} className="input" value={String(doc.name ?? "")} onChange={(e) => change(updateSequence(doc, { name: e.target.value }), undefined, false)} />
        </div>
        <div className="field">
          <label htmlFor={ids.namespace}>Namespace</label>
          <input id={ids.namespace} className="input" value={String(doc.namespace ?? "")} onChange={(e) => change(updateSequence(doc, { namespace: e.target.value }), undefined, false)} />
        </div>
        <div className="field">
          <label htmlFor={ids.version}>Version</label>
          <input
            id={ids.version}
            className="input"
            type="number"
            value={typeof doc.version === "number" ? doc.version : ""}
            onChange={(e) => change(updateSequence(doc, { version: e.target.value === "" ? undefined : Number(e.target.value) }), undefined, false)}
          />
        </div>
        <div className="field seq-save">
          <button type="button" className="btn btn-primary" disabled={!valid || !named || !changed || save.isPending || save.isSuccess} onClick={() => save.mutate({ tenantId, sequence: toSend() })}>
            Save
          </button>
          <span className="muted form-hint">
            {!valid
              ? `${check.problems.length} problem${check.problems.length === 1 ? "" : "s"} to fix before saving`
              : !named
                ? "Name the sequence to save it"
                : !changed
                  ? "No changes to save"
                  : stored
                    ? `Saves a new version${doc.id === stored.id ? ` (v${String(toSendVersion(doc, stored, nextVersion))})` : ""}`
                    : "Saves this version"}
          </span>
        </div>
      </div>
      {savedVersion !== undefined && !dirty && (
        <p className="alert alert-ok" role="status">
          Saved v{savedVersion}
        </p>
      )}
      {draft.restoredAt && dirty && (
        <div className="notice seq-draft-note" role="status">
          Draft restored from <LocalTime iso={draft.restoredAt} />.{" "}
          <button type="button" className="btn btn-small" onClick={draft.discard}>
            Discard draft
          </button>
        </div>
      )}
      {save.error && (
        <div className="alert alert-error" role="alert">
          Could not save: {save.error.message}
        </div>
      )}
      {general.length > 0 && (
        <ul className="alert alert-error seq-problems" aria-label="Problems with the sequence">
          {general.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
      {check.warnings.length > 0 && (
        <ul className="notice seq-problems" aria-label="Warnings">
          {check.warnings.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}

      <div className="seq-toolbar toolbar" role="toolbar" aria-label="Editor tools">
        <div role="tablist" aria-label="Views" className="seq-tabs">
          <button type="button" role="tab" aria-selected={tab === "canvas"} className="btn btn-small" onClick={() => setTab("canvas")}>
            Canvas
          </button>
          <button type="button" role="tab" aria-selected={tab === "json"} className="btn btn-small" onClick={() => setTab("json")}>
            JSON
          </button>
        </div>
        {tab === "canvas" && (
          <div role="tablist" aria-label="Trees" className="seq-tabs">
            {TREES.map((name) => (
              <button
                key={name}
                type="button"
                role="tab"
                aria-selected={tree === name}
                className="btn btn-small"
                title={name === "blocks" ? "The blocks that run" : `The cleanup tree run on ${name === "on_failure" ? "failure" : "cancel"}`}
                onClick={() => showTree(name)}
              >
                {name === "blocks" ? "Main" : name}
                {name !== "blocks" && !Array.isArray(doc[name]) ? " (none)" : ""}
              </button>
            ))}
          </div>
        )}
        <button type="button" className="btn btn-small" disabled={history.past.length === 0} onClick={() => travel(undo)} aria-keyshortcuts="Control+Z">
          Undo
        </button>
        <button type="button" className="btn btn-small" disabled={history.future.length === 0} onClick={() => travel(redo)} aria-keyshortcuts="Control+Shift+Z">
          Redo
        </button>
      </div>

      {tab === "json" ? (
        <div className="seq-json" role="tabpanel" aria-label="JSON">
          <label htmlFor={ids.json}>Sequence JSON (exactly what Save sends{stored ? ", before the new id and version" : ""})</label>
          <textarea
            id={ids.json}
            className="input textarea seq-json-text"
            value={jsonDraft ?? JSON.stringify(doc, null, 2)}
            onChange={(e) => setJsonDraft(e.target.value)}
            spellCheck={false}
          />
          {jsonError && (
            <p className="field-error" role="alert">
              {jsonError}
            </p>
          )}
          <div className="toolbar">
            <button type="button" className="btn btn-small" disabled={jsonDraft === null} onClick={applyJson}>
              Apply JSON
            </button>
            <button type="button" className="btn btn-small" disabled={jsonDraft === null} onClick={() => (setJsonDraft(null), setJsonError(null))}>
              Discard changes
            </button>
          </div>
        </div>
      ) : (
        <div className="seq-workspace" role="tabpanel" aria-label="Canvas">
          <section className="seq-palette" aria-label="Palette">
            <h2 className="seq-panel-title">Add a block</h2>
            <p className="muted form-hint">Adds {whereLabel}.</p>
            {BLOCK_TYPES.map((type) => (
              <button
                key={type}
                type="button"
                className="btn btn-small btn-block"
                onClick={() => add(type)}
                draggable
                onDragStart={(e) => {
                  e.dataTransfer.setData(BLOCK_TYPE_DRAG, type);
                  e.dataTransfer.effectAllowed = "copy";
                }}
              >
                Add {type}
              </button>
            ))}
            <h2 className="seq-panel-title">Outline</h2>
            <ul className="seq-outline" aria-label="Blocks">
              {outline.map(({ block, path }) => {
                const key = pathKey(path);
                const problems = pinned.get(key);
                return (
                  <li key={key} className={`seq-depth-${Math.min(path.filter((p) => typeof p === "number").length - 1, 6)}`}>
                    <button
                      type="button"
                      className={`seq-outline-item${selectedPath && samePath(selectedPath, path) ? " seq-outline-current" : ""}${problems ? " seq-outline-invalid" : ""}`}
                      aria-pressed={selectedPath ? samePath(selectedPath, path) : false}
                      onClick={() => setSelection({ kind: "block", path })}
                    >
                      {block.type} {block.id}
                      {armOfPath(doc, path) && <span className="muted"> · {armOfPath(doc, path)}</span>}
                      {problems ? " ⚠" : ""}
                    </button>
                    {slotsOf(block)
                      .filter((slot) => !Array.isArray(getAt(block, slot.path)) || (getAt(block, slot.path) as unknown[]).length === 0)
                      .map((slot) => {
                        const list = [...path, ...slot.path];
                        return (
                          <button
                            key={slot.label}
                            type="button"
                            className="seq-outline-item seq-outline-slot"
                            aria-pressed={selection?.kind === "slot" && samePath(selection.list, list)}
                            onClick={() => setSelection({ kind: "slot", list })}
                          >
                            empty {slot.label} of {block.id}
                          </button>
                        );
                      })}
                  </li>
                );
              })}
            </ul>
          </section>

          <Canvas doc={doc} tree={tree} problems={pinned} selection={selection} onSelect={setSelection} onDrop={onDrop} onDropType={addAt} />

          <section className="seq-inspector" aria-label="Inspector">
            <h2 className="seq-panel-title">Inspector</h2>
            {selectedPath && isBlock(selectedBlock) ? (
              <>
                <div className="seq-actions">
                  {!isSagaPart(selectedPath) && (
                    <>
                      <button type="button" className="btn btn-small" onClick={() => moveResult(moveBlock(doc, selectedPath, -1))} aria-keyshortcuts="Alt+ArrowUp">
                        Move up
                      </button>
                      <button type="button" className="btn btn-small" onClick={() => moveResult(moveBlock(doc, selectedPath, 1))} aria-keyshortcuts="Alt+ArrowDown">
                        Move down
                      </button>
                      <button type="button" className="btn btn-small" onClick={() => moveResult(indentBlock(doc, selectedPath))} aria-keyshortcuts="Alt+ArrowRight">
                        Nest into block above
                      </button>
                      <button type="button" className="btn btn-small" onClick={() => moveResult(outdentBlock(doc, selectedPath))} aria-keyshortcuts="Alt+ArrowLeft">
                        Move out
                      </button>
                    </>
                  )}
                  <button type="button" className="btn btn-small btn-danger" onClick={() => remove(selectedPath)} aria-keyshortcuts="Delete">
                    {deleteLabel(selectedPath)}
                  </button>
                </div>
                <Inspector
                  key={`${pathKey(selectedPath)}:${revision}`}
                  block={selectedBlock}
                  problems={pinned.get(pathKey(selectedPath)) ?? []}
                  handlers={handlers.data ?? { builtins: [], seen: [] }}
                  hints={templateHints(doc, selectedPath)}
                  onChange={(fields) => change(updateBlock(doc, selectedPath, fields), undefined, false)}
                  onAddBranch={() => change(addBranch(doc, selectedPath))}
                  onRemoveBranch={(index) => change(removeBranch(doc, selectedPath, index))}
                  onEdit={(edit) => change(edit(doc, selectedPath))}
                />
              </>
            ) : (
              <SequenceSettings
                key={revision}
                doc={doc}
                handlers={[...(handlers.data?.builtins ?? []), ...(handlers.data?.seen ?? [])]}
                onChange={(fields) => change(updateSequence(doc, fields), undefined, false)}
                onShowTree={showTree}
              />
            )}
          </section>
        </div>
      )}

      <section className="card seq-run" aria-label="Run">
        <h2 className="seq-panel-title">Run</h2>
        {stored ? (
          <RunForm tenantId={tenantId} sequenceId={stored.id} version={initial.version} inputSchema={initial.input_schema} />
        ) : (
          <p className="muted">Save the sequence to run it.</p>
        )}
        <p className="section-link">
          <Link prefetch={false} href={`/t/${tenantId}/sequences`}>All sequences</Link>
        </p>
      </section>
    </div>
  );
}

/** What Delete removes: the block, or for a saga's action its whole saga step. */
function deleteLabel(path: Path): string {
  if (!isSagaPart(path)) return "Delete block";
  return path[path.length - 1] === "action" ? "Delete saga step" : "Delete compensation";
}

function toSendVersion(doc: SequenceDoc, stored: NonNullable<EditorProps["stored"]>, next: number | null) {
  const storedVersion = stored.versions.find((v) => v.id === stored.id)?.version;
  return doc.version === storedVersion ? next : doc.version;
}

/** A v4 UUID; crypto.randomUUID needs a secure context, getRandomValues does not. */
function newUuid(): string {
  if (typeof crypto.randomUUID === "function" && globalThis.isSecureContext) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
