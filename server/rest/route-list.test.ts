// The route list in docs/rest-api.md is the dispatcher's table: regenerated, it is the file
// (run npm run rest-docs after changing a route), and every route it lists is served by exactly
// that route of the table.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { matchRoute } from "./index.ts";
import { routeListMarkdown } from "./route-list.ts";
import { ROUTES } from "./routes.ts";

const DOC = new URL("../../docs/rest-api.md", import.meta.url);
const SAMPLE: Record<string, string> = { id: "0190a7d2-3c4e-7f00-8000-000000000001", pool_id: "0190a7d2-3c4e-7f00-8000-000000000002", resource_id: "0190a7d2-3c4e-7f00-8000-000000000003" };

describe("docs/rest-api.md", () => {
  it("is the route table, generated (run npm run rest-docs after changing a route)", () => {
    expect(readFileSync(DOC, "utf8")).toBe(routeListMarkdown(ROUTES));
  });

  it("lists every route once, and each listed path is dispatched to that route", () => {
    const rows = readFileSync(DOC, "utf8").split("\n").filter((line) => /^\| (GET|POST|PUT|PATCH|DELETE) \|/.test(line));
    expect(rows).toHaveLength(ROUTES.length);
    for (const row of rows) {
      const [, method, path] = /^\| (\w+) \| `([^`]+)`/.exec(row)!;
      const concrete = path!.replace(/\{([a-z_]+)\}/g, (_, name: string) => SAMPLE[name] ?? `sample-${name}`);
      const matched = matchRoute(method!, `/api/v1${concrete}`);
      expect(matched?.route, `${method} ${path}`).toBe(ROUTES.find((route) => route.method === method && route.path === path));
    }
  });
});
