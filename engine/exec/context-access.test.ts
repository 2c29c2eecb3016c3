import { describe, expect, it } from "vitest";
import { visibleContext } from "./context-access.ts";

const context = { data: { a: 1, b: 2, secret: "s" }, config: { region: "eu" }, audit: [{ event: "x" }], runtime: { attempt: 0 } };
const access = (over: object) => ({ data: true as const, config: true, audit: false, runtime: false, ...over });

describe("context_access (A.3)", () => {
  it("shows data and config when absent", () => {
    expect(visibleContext(context, undefined)).toEqual({ data: context.data, config: context.config });
  });
  it.each([
    [{ data: "all" }, { data: context.data, config: context.config }],
    [{ data: "none" }, { config: context.config }],
    [{ data: false, config: false }, {}],
    [{ data: { fields: ["a", "missing"] } }, { data: { a: 1 }, config: context.config }],
    [{ audit: true, runtime: true, config: false }, { data: context.data, audit: context.audit, runtime: context.runtime }],
  ])("%j", (over, expected) => {
    expect(visibleContext(context, access(over) as never)).toEqual(expected);
  });
  it("never reaches inherited properties through a field list", () => {
    expect(visibleContext(context, access({ data: { fields: ["__proto__", "constructor"] } }) as never)).toEqual({ data: {}, config: context.config });
  });
});
