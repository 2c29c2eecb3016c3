// The block tree laid out as it runs: a pure function from blocks to positioned nodes and routed
// edges, drawn by the editor's canvas and by the instance's run graph.
//
// A sequence is a structured program, so its graph is series-parallel: every composite opens
// (its fork) and closes (its join) around its arms. Such a graph lays out exactly by composing
// boxes: a list stacks its blocks top to bottom on one vertical spine; a fork puts its arms side
// by side in declaration order and its join below the tallest; the next block hangs below the
// join. A general layered layout (dagre) orders nodes within a rank to minimise crossings, which
// is what drew branches right to left and a following block beside the branches; here the order
// is the definition's, by construction, and the result is deterministic.
import {
  armsOf, getAt, isBlock, pathKey, sagaSteps, shapeOf, type JsonBlock, type Path,
} from "./arms.ts";

export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 64;
export const JOIN_WIDTH = 132;
export const JOIN_HEIGHT = 26;
export const SLOT_HEIGHT = 52;
export const AFTER_WIDTH = 180;
export const AFTER_HEIGHT = 30;
/** Between blocks that follow each other. */
const GAP = 36;
/** From a fork to its arms: room for the arm labels. */
const FORK_GAP = 60;
/** From the tallest arm to the join. */
const MERGE_GAP = 36;
/** The same when editable: room for an arm's "+" below its label, and for the "+" after its last block. */
const EDIT_FORK_GAP = 80;
const EDIT_MERGE_GAP = 44;
/** Between arms. */
const ARM_GAP = 28;
/** An empty arm when there are no slots: a labelled line from the fork straight to the join. */
const PASS_WIDTH = 120;
/** Where arm edges turn: below the fork, above the join. */
const TURN = 14;
/** A container's frame around its content. */
const PAD = 14;
/** A loop's return lane, right of its body. */
const LANE = 28;
/** From a saga action to its compensation: room for the label. */
const COMPENSATION_GAP = 116;

export interface Point {
  x: number;
  y: number;
}

interface Rect {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export type LayoutNode = Rect &
  (
    | { kind: "block"; path: Path; block: JsonBlock; composite: boolean }
    /** Where a composite's arms meet again; the next block follows it. */
    | { kind: "join"; path: Path; block: JsonBlock }
    /** The outline of a loop, for_each, cancellation_scope or saga around its content. */
    | { kind: "frame"; path: Path; block: JsonBlock }
    /** An empty block list (editable layouts only): a drop target, a place to add into. */
    | { kind: "slot"; list: Path; label: string }
    /** The place right after a composite (editable layouts only). */
    | { kind: "after"; path: Path; block: JsonBlock }
    /** Where a tree begins (editable layouts only): its edge to the first block is the place before it. */
    | { kind: "start"; list: Path; label: string }
  );

export type EdgeKind = "next" | "arm" | "merge" | "loop" | "compensation";

/** A place in a block list: a new block put there becomes `list[index]`. */
export interface Insert {
  list: Path;
  index: number;
}

export interface LayoutEdge {
  id: string;
  kind: EdgeKind;
  source: string;
  target: string;
  /** An orthogonal polyline, from the source's side to the target's. */
  points: Point[];
  label?: string;
  labelAt?: Point;
  /** Longer words for the label (a tooltip). */
  title?: string;
  /** Where a block added on this edge goes (editable layouts only; none where nothing can go). */
  insert?: Insert;
}

export interface Layout {
  nodes: LayoutNode[];
  edges: LayoutEdge[];
  width: number;
  height: number;
}

export interface LayoutOptions {
  /** Draw empty lists as slots and a slot after each composite (the editor); otherwise an empty arm is a plain line. */
  editable?: boolean;
  /** A block node's height (the editor makes room for a validation message). */
  heightOf?(block: JsonBlock, path: Path): number;
}

/** Where a box is entered (the top of its first node) and left (the bottom of its last), on its spine. */
interface Port {
  id: string;
  y: number;
}

/** A laid-out piece in its own coordinates; `spine` is the x its entry and exit lie on. */
interface Box {
  width: number;
  height: number;
  spine: number;
  entry: Port | null;
  exit: Port | null;
  nodes: LayoutNode[];
  edges: LayoutEdge[];
}

const EMPTY: Box = { width: 0, height: 0, spine: 0, entry: null, exit: null, nodes: [], edges: [] };

/** Moves a box's contents by (dx, dy), in place: every box is placed exactly once. */
function place(box: Box, dx: number, dy: number): Box {
  for (const node of box.nodes) {
    node.x += dx;
    node.y += dy;
  }
  for (const edge of box.edges) {
    for (const point of edge.points) {
      point.x += dx;
      point.y += dy;
    }
    if (edge.labelAt) edge.labelAt = { x: edge.labelAt.x + dx, y: edge.labelAt.y + dy };
  }
  return box;
}

function single(node: LayoutNode): Box {
  return { width: node.width, height: node.height, spine: node.width / 2, entry: { id: node.id, y: 0 }, exit: { id: node.id, y: node.height }, nodes: [node], edges: [] };
}

function edge(kind: EdgeKind, source: string, target: string, points: Point[], extra: Partial<LayoutEdge> = {}): LayoutEdge {
  return { id: `${kind}:${source}->${target}`, kind, source, target, points, ...extra };
}

/**
 * Stacks boxes top to bottom with their spines aligned, each joined to the one before by a
 * "next" edge (labelled with `labels[i]` when given, inserting at `inserts[i]`). Empty boxes take no room.
 */
function stack(parts: Box[], labels: (string | undefined)[] = [], inserts: (Insert | undefined)[] = []): Box {
  const shown = parts.map((box, index) => ({ box, label: labels[index], insert: inserts[index] })).filter(({ box }) => box.nodes.length > 0);
  if (shown.length === 0) return { ...EMPTY, nodes: [], edges: [] };
  const spine = Math.max(...shown.map(({ box }) => box.spine));
  const width = spine + Math.max(...shown.map(({ box }) => box.width - box.spine));
  const nodes: LayoutNode[] = [];
  const edges: LayoutEdge[] = [];
  let y = 0;
  let entry: Port | null = null;
  let exit: Port | null = null;
  shown.forEach(({ box, label, insert }, index) => {
    if (index > 0) y += GAP;
    place(box, spine - box.spine, y);
    nodes.push(...box.nodes);
    edges.push(...box.edges);
    if (box.entry) {
      const top = y + box.entry.y;
      if (exit) {
        const extra = { ...(label ? { label, labelAt: { x: spine, y: (exit.y + top) / 2 } } : {}), ...(insert ? { insert } : {}) };
        edges.push(edge("next", exit.id, box.entry.id, [{ x: spine, y: exit.y }, { x: spine, y: top }], extra));
      }
      entry ??= { id: box.entry.id, y: top };
    }
    if (box.exit) exit = { id: box.exit.id, y: y + box.exit.y };
    y += box.height;
  });
  return { width, height: y, spine, entry, exit, nodes, edges };
}

/** Lays out one sequence's blocks (or any block list) in execution order. */
export function layoutBlocks(blocks: unknown, options: LayoutOptions = {}, at: Path = ["blocks"]): Layout {
  const editable = options.editable ?? false;
  const forkGap = editable ? EDIT_FORK_GAP : FORK_GAP;
  const mergeGap = editable ? EDIT_MERGE_GAP : MERGE_GAP;
  const heightOf = options.heightOf ?? (() => NODE_HEIGHT);

  const blockNode = (block: JsonBlock, path: Path, composite: boolean): LayoutNode => ({
    kind: "block", id: pathKey(path), path, block, composite, x: 0, y: 0, width: NODE_WIDTH, height: heightOf(block, path),
  });
  const joinNode = (block: JsonBlock, path: Path): LayoutNode => ({
    kind: "join", id: `join:${pathKey(path)}`, path, block, x: 0, y: 0, width: JOIN_WIDTH, height: JOIN_HEIGHT,
  });

  const list = (value: unknown, listPath: Path, label: string): Box => {
    const items = Array.isArray(value) ? value.flatMap((block, index) => (isBlock(block) ? [{ block, index }] : [])) : [];
    if (items.length === 0) {
      if (!editable) return EMPTY;
      return single({ kind: "slot", id: `slot:${pathKey(listPath)}`, list: listPath, label, x: 0, y: 0, width: NODE_WIDTH, height: SLOT_HEIGHT });
    }
    const parts: Box[] = [];
    const inserts: (Insert | undefined)[] = [];
    for (const { block, index } of items) {
      const path = [...listPath, index];
      parts.push(blockBox(block, path));
      inserts.push(editable ? { list: listPath, index } : undefined);
      // Adding "after a composite" needs a target of its own: selecting a block inside an arm adds into the arm.
      if (editable && shapeOf(block) !== "leaf") {
        parts.push(single({ kind: "after", id: `after:${pathKey(path)}`, path, block, x: 0, y: 0, width: AFTER_WIDTH, height: AFTER_HEIGHT }));
        // The "after" node is that place already; the edge out of it leads there too.
        inserts.push(undefined);
      }
    }
    return stack(parts, [], inserts);
  };

  const blockBox = (block: JsonBlock, path: Path): Box => {
    switch (shapeOf(block)) {
      case "fork":
        return fork(block, path);
      case "loop":
        return container(block, path, true);
      case "container":
        return container(block, path, false);
      case "saga":
        return saga(block, path);
      default:
        return single(blockNode(block, path, false));
    }
  };

  /** The block, its arms side by side in order (each labelled), and the join below them. */
  const fork = (block: JsonBlock, path: Path): Box => {
    const head = blockNode(block, path, true);
    const join = joinNode(block, path);
    const arms = armsOf(block).map((arm) => {
      const value = getAt(block, arm.path);
      const box = list(value, [...path, ...arm.path], arm.label);
      return { label: arm.label, box, width: box.nodes.length ? box.width : PASS_WIDTH, list: [...path, ...arm.path], length: Array.isArray(value) ? value.length : 0 };
    });
    const armsWidth = arms.reduce((sum, arm) => sum + arm.width, 0) + ARM_GAP * Math.max(0, arms.length - 1);
    const width = Math.max(NODE_WIDTH, armsWidth, JOIN_WIDTH);
    const spine = width / 2;
    const armsTop = head.height + forkGap;
    const joinTop = arms.length ? armsTop + Math.max(...arms.map((arm) => arm.box.height)) + mergeGap : head.height + GAP;
    head.x = spine - head.width / 2;
    join.x = spine - join.width / 2;
    join.y = joinTop;
    const nodes: LayoutNode[] = [head];
    const edges: LayoutEdge[] = [];
    const forkTurn = head.height + TURN;
    const joinTurn = joinTop - TURN;
    let x = spine - armsWidth / 2;
    arms.forEach(({ label, box, width: armWidth, list: armList, length }, index) => {
      const { entry, exit } = box;
      const column = x + (entry ? box.spine : armWidth / 2);
      const fromFork = [{ x: spine, y: head.height }, { x: spine, y: forkTurn }, { x: column, y: forkTurn }];
      const toJoin = [{ x: column, y: joinTurn }, { x: spine, y: joinTurn }, { x: spine, y: joinTop }];
      const labelled = { label, labelAt: { x: column, y: (forkTurn + armsTop) / 2 } };
      if (entry && exit) {
        place(box, x, armsTop);
        nodes.push(...box.nodes);
        edges.push(...box.edges);
        const at = (where: number) => (editable ? { insert: { list: armList, index: where } } : {});
        edges.push(edge("arm", head.id, entry.id, [...fromFork, { x: column, y: armsTop + entry.y }], { ...labelled, ...at(0) }));
        edges.push(edge("merge", exit.id, join.id, [{ x: column, y: armsTop + exit.y }, ...toJoin], at(length)));
      } else {
        // Nothing runs in this arm: a line from the fork to the join, still labelled and in its place.
        edges.push({ ...edge("arm", head.id, join.id, [...fromFork, ...toJoin], labelled), id: `arm:${head.id}->${join.id}:${index}` });
      }
      x += armWidth + ARM_GAP;
    });
    if (arms.length === 0) edges.push(edge("next", head.id, join.id, [{ x: spine, y: head.height }, { x: spine, y: joinTop }]));
    nodes.push(join);
    return { width, height: joinTop + join.height, spine, entry: { id: head.id, y: 0 }, exit: { id: join.id, y: joinTop + join.height }, nodes, edges };
  };

  /** A frame around `inner` (the block, its content, its join); a loop adds a lane on the right for its way back. */
  const framed = (block: JsonBlock, path: Path, inner: Box, lane: boolean): Box => {
    const right = PAD + (lane ? LANE : 0);
    const frame: LayoutNode = { kind: "frame", id: `frame:${pathKey(path)}`, path, block, x: 0, y: 0, width: PAD + inner.width + right, height: inner.height + 2 * PAD };
    place(inner, PAD, PAD);
    const shift = (port: Port | null) => port && { id: port.id, y: port.y + PAD };
    // The frame goes first so that it is drawn under what it holds.
    return { width: frame.width, height: frame.height, spine: inner.spine + PAD, entry: shift(inner.entry), exit: shift(inner.exit), nodes: [frame, ...inner.nodes], edges: inner.edges };
  };

  /** loop, for_each, cancellation_scope: the block, its body below it, a join, all in a frame. */
  const container = (block: JsonBlock, path: Path, loops: boolean): Box => {
    const head = blockNode(block, path, true);
    const join = joinNode(block, path);
    const arm = armsOf(block)[0];
    const value = arm ? getAt(block, arm.path) : undefined;
    const body = arm ? list(value, [...path, ...arm.path], arm.label) : EMPTY;
    const bodyList = arm ? [...path, ...arm.path] : null;
    const ends = editable && bodyList ? [undefined, { list: bodyList, index: 0 }, { list: bodyList, index: Array.isArray(value) ? value.length : 0 }] : [];
    const inner = stack([single(head), body, single(join)], [], ends);
    const box = framed(block, path, inner, loops);
    if (loops) {
      // After the body, back up the lane to the block, which decides whether to go round again.
      const lane = PAD + inner.width + LANE / 2;
      const back = join.y + join.height / 2;
      const top = head.y + head.height / 2;
      const title = block.type === "for_each" ? "next item" : "repeat while the condition holds";
      box.edges.push(
        edge("loop", join.id, head.id, [{ x: join.x + join.width, y: back }, { x: lane, y: back }, { x: lane, y: top }, { x: head.x + head.width, y: top }], {
          label: "↻",
          labelAt: { x: lane, y: (back + top) / 2 },
          title,
        }),
      );
    }
    return box;
  };

  /** saga: its actions top to bottom, each labelled with its step id, its compensation to its right. */
  const saga = (block: JsonBlock, path: Path): Box => {
    const head = blockNode(block, path, true);
    const join = joinNode(block, path);
    const steps = sagaSteps(block);
    const rows = steps.map(({ action, compensation }): Box => {
      if (!action) return EMPTY;
      const main = blockBox(action.block, [...path, ...action.path]);
      if (!compensation || !main.entry) return main;
      const undo = place(blockBox(compensation.block, [...path, ...compensation.path]), main.width + COMPENSATION_GAP, 0);
      const from = main.nodes.find((node) => node.id === main.entry!.id)!;
      const to = undo.nodes.find((node) => node.id === undo.entry?.id);
      const edges = [...main.edges, ...undo.edges];
      if (to) {
        const y = from.y + from.height / 2;
        const toY = to.y + to.height / 2;
        const middle = (from.x + from.width + to.x) / 2;
        const points = y === toY
          ? [{ x: from.x + from.width, y }, { x: to.x, y }]
          : [{ x: from.x + from.width, y }, { x: middle, y }, { x: middle, y: toY }, { x: to.x, y: toY }];
        edges.push(edge("compensation", from.id, to.id, points, { label: "compensation", labelAt: { x: middle, y } }));
      }
      return { ...main, width: main.width + COMPENSATION_GAP + undo.width, height: Math.max(main.height, undo.height), nodes: [...main.nodes, ...undo.nodes], edges };
    });
    const inner = stack([single(head), ...rows, single(join)], [undefined, ...steps.map((step) => step.id || undefined)]);
    return framed(block, path, inner, false);
  };

  const label = String(at[at.length - 1] ?? "blocks");
  const tree = list(blocks, at, label);
  const started = editable && tree.nodes.some((node) => node.kind !== "slot");
  const start = (): LayoutNode => ({ kind: "start", id: `start:${pathKey(at)}`, list: at, label, x: 0, y: 0, width: JOIN_WIDTH, height: JOIN_HEIGHT });
  const box = started ? stack([single(start()), tree], [], [undefined, { list: at, index: 0 }]) : tree;
  return { nodes: box.nodes, edges: box.edges, width: box.width, height: box.height };
}
