// AppError is recognised across copies of its module, as the web server's bundles need.
import { expect, it, vi } from "vitest";
import { AppError, isAppError } from "./errors.ts";

it("recognises an AppError made by another copy of the module, and nothing else", async () => {
  vi.resetModules();
  const copy = await import("./errors.ts");
  expect(copy.AppError).not.toBe(AppError);
  const foreign = new copy.AppError("conflict", "stale epoch");
  expect(foreign instanceof AppError).toBe(true);
  expect(isAppError(foreign, "conflict")).toBe(true);
  expect(new Error("plain") instanceof AppError).toBe(false);
  expect((null as unknown) instanceof AppError).toBe(false);
});
