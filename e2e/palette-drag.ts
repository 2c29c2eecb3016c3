// A palette block held over a drop target, as Chromium's drag events say it (dragstart on the
// palette button, then dragenter/dragover on the target): for asserting what a target shows while
// something is held over it and after the drag leaves it, with exactly those events whatever a
// pointer's path would cross. The drops themselves stay real drags (locator.dragTo).
import type { Locator, Page } from "@playwright/test";

export async function holdPaletteBlockOver(page: Page, paletteButton: Locator, target: Locator) {
  const dataTransfer = await page.evaluateHandle(() => new DataTransfer());
  // The palette's own dragstart handler writes the block type into it.
  await paletteButton.dispatchEvent("dragstart", { dataTransfer });
  await target.dispatchEvent("dragenter", { dataTransfer });
  await target.dispatchEvent("dragover", { dataTransfer });
  return {
    /** The drag leaves the target without dropping. */
    leave: async () => {
      await target.dispatchEvent("dragleave", { dataTransfer });
      await paletteButton.dispatchEvent("dragend", { dataTransfer });
    },
  };
}
