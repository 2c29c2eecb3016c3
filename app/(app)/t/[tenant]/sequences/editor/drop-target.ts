"use client";

// Where a block type dragged from the palette may be dropped (a block, an empty slot, the place
// after a composite, an edge's "+"): accepts only that drag, and says while one is over it so the
// target can be highlighted before the drop.
import { useEffect, useState, type DragEvent } from "react";

/** The drag data type of a block type dragged from the palette. */
export const BLOCK_TYPE_DRAG = "application/x-bulkhead-block-type";

const isPaletteDrag = (event: DragEvent) => event.dataTransfer.types.includes(BLOCK_TYPE_DRAG);

export interface DropTarget {
  /** A palette block is being dragged over this target. */
  over: boolean;
  /** Spread on the target element. */
  props: {
    onDragEnter(event: DragEvent): void;
    onDragOver(event: DragEvent): void;
    onDragLeave(event: DragEvent): void;
    onDrop(event: DragEvent): void;
  };
}

export function useDropTarget(onType: (type: string) => void): DropTarget {
  const [over, setOver] = useState(false);
  // A drag cancelled or dropped elsewhere ends without a leave on every target it crossed.
  useEffect(() => {
    if (!over) return;
    const end = () => setOver(false);
    document.addEventListener("dragend", end);
    document.addEventListener("drop", end);
    return () => {
      document.removeEventListener("dragend", end);
      document.removeEventListener("drop", end);
    };
  }, [over]);
  const accept = (event: DragEvent) => {
    if (!isPaletteDrag(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
    setOver(true);
  };
  return {
    over,
    props: {
      onDragEnter: accept,
      onDragOver: accept,
      onDragLeave: (event) => {
        // Moving onto a child of the target is no leaving.
        if (event.relatedTarget instanceof Node && event.currentTarget.contains(event.relatedTarget)) return;
        setOver(false);
      },
      onDrop: (event) => {
        setOver(false);
        const type = event.dataTransfer.getData(BLOCK_TYPE_DRAG);
        if (!type) return;
        event.preventDefault();
        event.stopPropagation();
        onType(type);
      },
    },
  };
}
