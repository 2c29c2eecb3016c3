// The walls of DESIGN.md are lint errors: each fixture below is one line of code as it would sit
// at a path, linted with the project's own ESLint config. A wrong-way import must be refused,
// the same import the right way must pass.
import path from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: path.resolve(import.meta.dirname, "..") });

async function restricted(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport {};\n`, { filePath });
  return result!.messages.filter((m) => m.ruleId === "no-restricted-imports").map((m) => m.message);
}

const FIXTURES: [where: string, code: string, refusedBecause: RegExp | null][] = [
  // the engine knows no web
  ["engine/exec/wall-fixture.ts", 'import { services } from "../../server/services.ts";', /engine never imports server/],
  ["engine/storage/wall-fixture.ts", 'import type { AppRouter } from "../../server/api/root.ts";', /engine never imports server/],
  ["engine/scheduler/wall-fixture.ts", 'import Page from "../../app/page.tsx";', /engine never imports server\/ or app/],
  // storage has one front door
  ["engine/scheduler/wall-fixture.ts", 'import { claimDueInstances } from "../storage/claim.ts";', /only way into storage/],
  ["engine/exec/tree/wall-fixture.ts", 'import type { OutputRow } from "../../storage/execution.ts";', /only way into storage/],
  ["engine/scheduler/wall-fixture.ts", 'import { BackendStore } from "../storage/index.ts";', null],
  ["engine/storage/wall-fixture.ts", 'import { claimDueInstances } from "./claim.ts";', null],
  ["server/api/routers/wall-fixture.ts", 'import { listMoves } from "../../../engine/storage/moves.ts";', /only way into storage/],
  ["app/(app)/ops/wall-fixture.tsx", 'import { INSTANCE_STATES } from "../../../engine/storage/instances.ts";', /only way into storage/],
  ["server/api/routers/wall-fixture.ts", 'import { Storage } from "../../../engine/storage/index.ts";', null],
  // the web never reads the evaluator
  ["server/rest/handlers/wall-fixture.ts", 'import { executionNodes } from "../../../engine/exec/tree/nodes.ts";', /read model/],
  ["app/(app)/t/[tenant]/wall-fixture.tsx", 'import { readTreeCursor } from "../../../../engine/exec/tree/cursor.ts";', /read model/],
  // the browser knows handlers by their descriptors only
  ["app/(app)/t/[tenant]/wall-fixture.tsx", 'import { createBuiltInHandlers } from "../../../../engine/handlers/registry.ts";', /descriptors/],
  ["app/(app)/t/[tenant]/wall-fixture.tsx", 'import { HANDLER_DESCRIPTORS } from "../../../../engine/handlers/descriptors.ts";', null],
  // tests may reach inside
  ["engine/scheduler/wall-fixture.test.ts", 'import { claimDueInstances } from "../storage/claim.ts";', null],
];

describe("the walls are lint errors", () => {
  it.each(FIXTURES)("%s: %s", async (where, code, refusedBecause) => {
    const messages = await restricted(where, code);
    if (refusedBecause === null) expect(messages).toEqual([]);
    else expect(messages).toEqual([expect.stringMatching(refusedBecause)]);
  });
});
