import { describe, expect, it } from "vitest";
import { listInput, readFilters, serverListInput, writeFilters } from "./list-input";

const SEQUENCE = "0193b2c4-1f1e-7a6b-8c9d-0e1f2a3b4c5d";

describe("the instance list's input from the address", () => {
  it("is the list's own input for states, a sequence and a search, as the browser reads the same address", () => {
    const params = new URLSearchParams({ state: "failed,waiting", sequence: SEQUENCE, q: "data.order = A-102" });
    const server = serverListInput("acme", params);
    expect(server).toEqual(listInput("acme", readFilters(params), { kind: "context", path: "data.order", value: "A-102" }));
    expect(server).toMatchObject({ tenantId: "acme", limit: 50, states: ["failed", "waiting"], sequenceId: SEQUENCE });
  });

  it("is the unfiltered first page for an empty address, with no filter key set", () => {
    const input = serverListInput("acme", new URLSearchParams());
    expect(JSON.parse(JSON.stringify(input))).toEqual({ tenantId: "acme", limit: 50 });
  });

  it("is left to the browser when the address has times (the reader's local time) or a search that does not parse", () => {
    expect(serverListInput("acme", new URLSearchParams({ after: "2026-12-01T10:00" }))).toBeNull();
    expect(serverListInput("acme", new URLSearchParams({ before: "2026-12-01T10:00" }))).toBeNull();
    expect(serverListInput("acme", new URLSearchParams({ q: "data..x = 1" }))).toBeNull();
  });

  it("drops states and sequences it does not know, and writes back what it read", () => {
    const filters = readFilters(new URLSearchParams({ state: "failed,exploded", sequence: "not-a-uuid" }));
    expect(filters).toMatchObject({ states: ["failed"], sequence: "" });
    expect(writeFilters(filters)).toBe("state=failed");
  });
});
