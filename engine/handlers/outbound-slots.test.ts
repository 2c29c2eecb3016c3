// Outbound requests per (tenant, host), through the real handlers against a real local server:
// a noisy tenant never has more than its bound open at the host, a quiet tenant's request to the
// same host starts at once, a waiting step ends when its signal fires and leaves no place behind,
// and waiting never fails a request (nor counts against its timeout_ms).
import type http from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_OUTBOUND_PER_HOST } from "./host-slots.ts";
import { createBuiltInHandlers } from "./registry.ts";
import { makeInput, readRequestBody, startServer, type TestServer } from "./test-support.ts";
import type { HandlerOutcome } from "./types.ts";

const SLOW_MS = 300;

/** What the server saw: every arrival in order, and how many requests each tenant had open. */
const arrivals: { tenant: string; at: number }[] = [];
const open = new Map<string, number>();
const maxOpen = new Map<string, number>();
let server: TestServer;

beforeAll(async () => {
  server = await startServer(async (request: http.IncomingMessage, response: http.ServerResponse) => {
    const tenant = String(request.headers["x-tenant"] ?? "?");
    arrivals.push({ tenant, at: performance.now() });
    open.set(tenant, (open.get(tenant) ?? 0) + 1);
    maxOpen.set(tenant, Math.max(maxOpen.get(tenant) ?? 0, open.get(tenant)!));
    response.on("close", () => open.set(tenant, open.get(tenant)! - 1));
    await readRequestBody(request);
    const path = (request.url ?? "/").split("?")[0];
    if (path === "/hop") {
      response.writeHead(302, { location: "/slow" });
      return response.end();
    }
    setTimeout(() => {
      if (path === "/v1/chat/completions") {
        response.writeHead(200, { "content-type": "application/json" });
        return response.end(JSON.stringify({ model: "m", choices: [{ message: { content: "hi" }, finish_reason: "stop" }] }));
      }
      response.writeHead(200, { "content-type": "text/plain" });
      response.end("slow answer");
    }, SLOW_MS);
  });
});
afterAll(() => server.close());
beforeEach(() => {
  arrivals.length = 0;
  open.clear();
  maxOpen.clear();
});

function handlers(limit: number) {
  const registry = createBuiltInHandlers({ httpAllow: [server.hostPort], outboundPerHost: () => limit });
  return { httpRequest: registry.get("http_request")!, llmCall: registry.get("llm_call")! };
}

const call = (tenant: string, params: Record<string, unknown> = {}, signal?: AbortSignal) =>
  makeInput({ url: server.url("/slow"), headers: { "x-tenant": tenant }, ...params }, { tenantId: tenant, ...(signal ? { signal } : {}) });

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("condition not reached");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const arrived = (tenant: string) => arrivals.filter((arrival) => arrival.tenant === tenant);
const succeeded = (outcome: HandlerOutcome) => outcome.kind === "success";

describe("outbound requests per (tenant, host)", () => {
  it("a noisy tenant's 40 requests keep at most 16 open; a quiet tenant's request to the same host starts at once", async () => {
    const bound = DEFAULT_OUTBOUND_PER_HOST;
    const { httpRequest } = handlers(bound);
    const noisy = Array.from({ length: 40 }, () => httpRequest(call("noisy")));
    await until(() => arrived("noisy").length >= bound);

    const issued = performance.now();
    const quiet = await httpRequest(call("quiet"));
    const outcomes = await Promise.all(noisy);
    const quietArrival = arrivals.findIndex((arrival) => arrival.tenant === "quiet");
    const noisy17th = arrivals.indexOf(arrived("noisy")[bound]!);

    // Every noisy request waited its turn and none failed because of the bound.
    expect(outcomes.filter(succeeded)).toHaveLength(40);
    expect(maxOpen.get("noisy")).toBe(bound);
    expect(succeeded(quiet)).toBe(true);
    // The quiet tenant did not queue behind the noisy one: it reached the server before the
    // noisy tenant's 17th request could (which needs one of the first 16 to finish).
    expect(quietArrival).toBeGreaterThanOrEqual(0);
    expect(noisy17th).toBeGreaterThan(quietArrival);
    const quietLatency = arrivals[quietArrival]!.at - issued;
    expect(quietLatency).toBeLessThan(SLOW_MS);
    console.info(`quiet tenant's request reached the server ${quietLatency.toFixed(1)} ms after it was issued; noisy max open ${maxOpen.get("noisy")}`);
  });

  it("an aborted waiting call returns promptly and its place is not leaked", async () => {
    const { httpRequest } = handlers(2);
    const holders = [httpRequest(call("a")), httpRequest(call("a"))];
    await until(() => arrived("a").length === 2);
    const controller = new AbortController();
    const waiting = httpRequest(call("a", {}, controller.signal));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const abortedAt = performance.now();
    controller.abort();
    const outcome = await waiting;
    const returnedIn = performance.now() - abortedAt;
    expect(outcome).toEqual({ kind: "failure", retryable: true, message: "request aborted" });
    expect(returnedIn).toBeLessThan(SLOW_MS / 2); // long before a holder could have let it in
    expect(arrived("a")).toHaveLength(2); // it never reached the server

    expect((await Promise.all(holders)).every(succeeded)).toBe(true);
    // Both slots are free again: two new requests are open together, and nothing waits behind a ghost.
    maxOpen.clear();
    const next = await Promise.all([httpRequest(call("a")), httpRequest(call("a"))]);
    expect(next.every(succeeded)).toBe(true);
    expect(maxOpen.get("a")).toBe(2);
  });

  it("a step timeout ends the wait the same way", async () => {
    const { httpRequest } = handlers(1);
    const holder = httpRequest(call("a"));
    await until(() => arrived("a").length === 1);
    const started = performance.now();
    const outcome = await httpRequest(call("a", {}, AbortSignal.timeout(60)));
    expect(outcome).toEqual({ kind: "failure", retryable: true, message: "request aborted" });
    expect(performance.now() - started).toBeLessThan(SLOW_MS - 50);
    expect(succeeded(await holder)).toBe(true);
    expect(arrived("a")).toHaveLength(1);
  });

  it("waiting for a slot does not count against timeout_ms", async () => {
    const { httpRequest } = handlers(1);
    const holder = httpRequest(call("a"));
    await until(() => arrived("a").length === 1);
    // It waits ~300 ms for the slot, then needs ~300 ms of its own: more than 500 ms in all.
    const waiter = await httpRequest(call("a", { timeout_ms: 500 }));
    expect(succeeded(await holder)).toBe(true);
    expect(waiter).toMatchObject({ kind: "success", output: { status: 200, body: "slow answer" } });
  });

  it("llm_call and http_request share the tenant's slots for a host", async () => {
    const { httpRequest, llmCall } = handlers(1);
    const holder = httpRequest(call("a"));
    await until(() => arrived("a").length === 1);
    const completion = llmCall(
      makeInput({ base_url: server.url("/v1"), model: "m", messages: [{ role: "user", content: "hi" }] }, { tenantId: "a" }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(arrivals).toHaveLength(1); // the completion waits for the tenant's one slot
    expect(succeeded(await holder)).toBe(true);
    expect(await completion).toMatchObject({ kind: "success", output: { content: "hi" } });
    expect(arrivals).toHaveLength(2);
  });

  it("a redirect gives its slot back before taking the next one (no self-deadlock at a bound of 1)", async () => {
    const { httpRequest } = handlers(1);
    const outcome = await httpRequest(call("a", { url: server.url("/hop") }));
    expect(outcome).toMatchObject({ kind: "success", output: { status: 200, body: "slow answer" } });
    expect(arrived("a")).toHaveLength(2);
  });
});
