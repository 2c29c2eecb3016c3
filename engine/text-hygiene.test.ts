import { describe, expect, it } from "vitest";
import { describeTextProblem, storableText, unstorableText } from "./text-hygiene.ts";

describe("unstorableText", () => {
  it("finds a lone surrogate or NUL anywhere, naming where, and passes paired surrogates", () => {
    expect(unstorableText({ a: [1, { b: "x\ud800" }] })).toEqual({ path: "a[1].b", message: "contains an unpaired UTF-16 surrogate" });
    expect(unstorableText(["ok", "\udc00 low first"])).toEqual({ path: "[1]", message: "contains an unpaired UTF-16 surrogate" });
    expect(unstorableText({ n: "a\u0000" }, "output")).toEqual({ path: "output.n", message: "contains a NUL (\\u0000) character" });
    expect(unstorableText({ "k\u0000": 1 })).toEqual({ path: "", message: "a key contains a NUL (\\u0000) character" });
    expect(unstorableText({ emoji: "😀 \ud83d\ude00", n: 1, t: true, z: null })).toBeNull();
  });

  it("describes a problem with its path, or alone for the value itself", () => {
    expect(describeTextProblem({ path: "name", message: "m" })).toBe("name: m");
    expect(describeTextProblem({ path: "", message: "m" })).toBe("m");
  });

  it("makes a message storable by replacing what cannot be stored, keeping pairs", () => {
    expect(storableText("a\u0000b\ud800c😀")).toBe("a\uFFFDb\uFFFDc😀");
  });
});
