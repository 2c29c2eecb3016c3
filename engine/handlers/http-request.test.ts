import http from "node:http";
import https from "node:https";
import zlib from "node:zlib";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import type { Lookup } from "./outbound-guard.ts";
import { MAX_RESPONSE_BYTES } from "./outbound-request.ts";
import { createBuiltInHandlers } from "./registry.ts";
import { makeInput, readRequestBody, startServer, type TestServer } from "./test-support.ts";
import type { Handler, HandlerOutcome } from "./types.ts";

// Every outbound socket goes through an Agent's createConnection (the handler uses agent: false,
// i.e. a fresh Agent per request): counting calls proves whether a request connected at all.
let connects: MockInstance[] = [];
beforeEach(() => {
  connects = [vi.spyOn(http.Agent.prototype, "createConnection"), vi.spyOn(https.Agent.prototype, "createConnection")];
});
afterEach(() => vi.restoreAllMocks());
const connectCount = () => connects.reduce((sum, spy) => sum + spy.mock.calls.length, 0);

/** A DNS stand-in: known names only, and it records every question. */
function fakeLookup(answers: Record<string, string>): Lookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (host: string) => {
    asked.push(host);
    const address = answers[host];
    if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return [{ address, family: address.includes(":") ? (6 as const) : (4 as const) }];
  };
  return Object.assign(lookup, { asked });
}

function httpRequest(httpAllow: string[], lookup?: Lookup): Handler {
  return createBuiltInHandlers({ httpAllow, lookup }).get("http_request")!;
}

function output(outcome: HandlerOutcome) {
  if (outcome.kind !== "success") throw new Error(`expected success, got ${JSON.stringify(outcome)}`);
  return outcome.output as { status: number; headers: Record<string, string>; body: unknown };
}

// The main server: its routes cover the response shapes the handler must classify.
let server: TestServer;
let other: TestServer;
const seen: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  other = await startServer((request, response) => {
    seen.push({ method: request.method, url: request.url, headers: request.headers, body: "" });
    response.end("other");
  });
  server = await startServer(async (request, response) => {
    const body = await readRequestBody(request);
    seen.push({ method: request.method, url: request.url, headers: request.headers, body });
    const [path, query] = (request.url ?? "/").split("?") as [string, string | undefined];
    const json = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json; charset=utf-8" });
      response.end(JSON.stringify(value));
    };
    switch (path) {
      case "/echo":
        return json(200, { method: request.method, headers: request.headers, body });
      case "/text":
        response.writeHead(200, { "content-type": "text/plain", "x-trace": "abc" });
        return response.end("plain words");
      case "/status":
        return json(Number(query), { error: { message: `status ${query} as asked` } });
      case "/redirect":
        response.writeHead(Number(new URLSearchParams(query).get("code") ?? 302), { location: new URLSearchParams(query).get("to") ?? "/echo" });
        return response.end();
      case "/loop":
        response.writeHead(302, { location: "/loop" });
        return response.end();
      case "/not-modified":
        response.writeHead(304);
        return response.end();
      case "/size": {
        const size = Number(new URLSearchParams(query).get("bytes"));
        if (new URLSearchParams(query).get("chunked")) {
          response.writeHead(200, { "content-type": "text/plain" });
          for (let sent = 0; sent < size; sent += 64 * 1024) response.write("x".repeat(Math.min(64 * 1024, size - sent)));
          return response.end();
        }
        response.writeHead(200, { "content-type": "text/plain", "content-length": size });
        return response.end("x".repeat(size));
      }
      case "/gzip-bomb":
        response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
        return response.end(zlib.gzipSync(Buffer.alloc(MAX_RESPONSE_BYTES * 4)));
      case "/gzip":
        response.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
        return response.end(zlib.gzipSync(JSON.stringify({ zipped: true })));
      case "/hang":
        return; // never answers
      default:
        return json(404, { error: "no such route" });
    }
  });
});
afterAll(async () => {
  await server.close();
  await other.close();
});
beforeEach(() => {
  seen.length = 0;
});

describe("http_request refuses internal targets without connecting", () => {
  it.each([
    ["http://127.0.0.1/", "refused: 127.0.0.1 is a loopback address"],
    ["http://10.0.0.1/", "refused: 10.0.0.1 is a private address"],
    ["http://169.254.169.254/latest/meta-data", "refused: 169.254.169.254 is a link-local address"],
    ["http://[::1]/", "refused: ::1 is a loopback address"],
    ["http://[::ffff:127.0.0.1]/", "refused: ::ffff:7f00:1 is a loopback address"],
    ["http://0x7f000001/", "refused: 127.0.0.1 is a loopback address"],
    ["http://0.0.0.0:80/", "refused: 0.0.0.0 is an unspecified address"],
    ["https://192.168.0.10/", "refused: 192.168.0.10 is a private address"],
    ["http://100.64.1.1/", "refused: 100.64.1.1 is a carrier-grade NAT address"],
    ["http://[fe80::1]/", "refused: fe80::1 is a link-local address"],
    ["http://224.0.0.251/", "refused: 224.0.0.251 is a multicast address"],
  ])("%s", async (url, message) => {
    const lookup = fakeLookup({});
    const outcome = await httpRequest([], lookup)(makeInput({ url }));
    expect(outcome).toEqual({ kind: "failure", retryable: false, message });
    expect(lookup.asked).toEqual([]); // literal addresses are not looked up
    expect(connectCount()).toBe(0);
  });

  it("a name that resolves to loopback (localhost, real resolver)", async () => {
    const outcome = await httpRequest([])(makeInput({ url: `http://localhost:${server.port}/echo` }));
    expect(outcome).toEqual({ kind: "failure", retryable: false, message: "refused: localhost resolves to a loopback address" });
    expect(connectCount()).toBe(0);
    expect(server.connections()).toBe(0);
  });

  it("a loopback server that is listening but not allow-listed sees no connection", async () => {
    const before = server.connections();
    const outcome = await httpRequest([`127.0.0.1:${other.port}`])(makeInput({ url: server.url("/echo") }));
    expect(outcome).toMatchObject({ kind: "failure", retryable: false, message: "refused: 127.0.0.1 is a loopback address" });
    expect(server.connections()).toBe(before);
    expect(seen).toEqual([]);
  });
});

describe("http_request against an allow-listed server", () => {
  it("GETs and parses a JSON response", async () => {
    const outcome = await httpRequest([server.hostPort])(makeInput({ url: server.url("/echo") }));
    const { status, headers, body } = output(outcome);
    expect(status).toBe(200);
    expect(headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(body).toMatchObject({ method: "GET", body: "" });
    expect(connectCount()).toBe(1);
  });

  it("returns a text body as text, with the response headers", async () => {
    const { body, headers } = output(await httpRequest([server.hostPort])(makeInput({ url: server.url("/text") })));
    expect(body).toBe("plain words");
    expect(headers["x-trace"]).toBe("abc");
  });

  it("sends a JSON body as application/json, and custom headers", async () => {
    const outcome = await httpRequest([server.hostPort])(
      makeInput({ method: "post", url: server.url("/echo"), headers: { "X-Token": "t1", "X-Count": 3 }, body: { a: [1, 2] } }),
    );
    const { body } = output(outcome) as { body: { method: string; headers: Record<string, string>; body: string } };
    expect(body.method).toBe("POST");
    expect(JSON.parse(body.body)).toEqual({ a: [1, 2] });
    expect(body.headers).toMatchObject({ "content-type": "application/json", "x-token": "t1", "x-count": "3" });
  });

  it("sends a string body as-is, keeping a given content type", async () => {
    const outcome = await httpRequest([server.hostPort])(
      makeInput({ method: "PUT", url: server.url("/echo"), headers: { "content-type": "text/csv" }, body: "a,b\n1,2" }),
    );
    const { body } = output(outcome) as { body: { body: string; headers: Record<string, string> } };
    expect(body.body).toBe("a,b\n1,2");
    expect(body.headers["content-type"]).toBe("text/csv");
  });

  it("allow-listing the host name (any port) works through the real resolver", async () => {
    const { status } = output(await httpRequest(["localhost"])(makeInput({ url: `http://localhost:${server.port}/echo` })));
    expect(status).toBe(200);
  });

  it("connects to the vetted address: one lookup, no second resolution at connect time", async () => {
    // pinned.test exists only in the fake resolver: the socket can only reach the server through the pinned answer.
    const lookup = fakeLookup({ "pinned.test": "127.0.0.1" });
    const outcome = await httpRequest([`pinned.test:${server.port}`], lookup)(makeInput({ url: `http://pinned.test:${server.port}/echo` }));
    expect(output(outcome).status).toBe(200);
    expect(lookup.asked).toEqual(["pinned.test"]);
    expect(seen[0]?.headers.host).toBe(`pinned.test:${server.port}`);
  });

  it("decodes a gzip response", async () => {
    expect(output(await httpRequest([server.hostPort])(makeInput({ url: server.url("/gzip") }))).body).toEqual({ zipped: true });
  });

  it("a final 3xx without Location is a success", async () => {
    expect(output(await httpRequest([server.hostPort])(makeInput({ url: server.url("/not-modified") }))).status).toBe(304);
  });
});

describe("http_request redirects", () => {
  it("follows a redirect on the same server", async () => {
    const outcome = await httpRequest([server.hostPort])(makeInput({ url: server.url("/redirect?to=/text") }));
    expect(output(outcome).body).toBe("plain words");
    expect(seen.map((request) => request.url)).toEqual(["/redirect?to=/text", "/text"]);
  });

  it("re-checks every hop: a redirect to a loopback target that is not allow-listed is refused", async () => {
    const to = encodeURIComponent(other.url("/secret"));
    const outcome = await httpRequest([server.hostPort])(makeInput({ url: server.url(`/redirect?to=${to}`) }));
    expect(outcome).toEqual({ kind: "failure", retryable: false, message: "refused: 127.0.0.1 is a loopback address" });
    expect(other.connections()).toBe(0);
  });

  it("a redirect to a name that resolves to loopback is refused", async () => {
    const to = encodeURIComponent(`http://localhost:${server.port}/echo`);
    const outcome = await httpRequest([server.hostPort])(makeInput({ url: server.url(`/redirect?to=${to}`) }));
    expect(outcome).toEqual({ kind: "failure", retryable: false, message: "refused: localhost resolves to a loopback address" });
  });

  it("does not forward credentials to another origin, and turns a 303 after POST into a GET", async () => {
    const to = encodeURIComponent(other.url("/landing"));
    const outcome = await httpRequest([server.hostPort, other.hostPort])(
      makeInput({ method: "POST", url: server.url(`/redirect?code=303&to=${to}`), headers: { authorization: "Bearer s3cret", cookie: "a=b", "x-keep": "1" }, body: { x: 1 } }),
    );
    expect(output(outcome).body).toBe("other");
    const hop = seen.find((request) => request.url === "/landing")!;
    expect(hop.method).toBe("GET");
    expect(hop.headers.authorization).toBeUndefined();
    expect(hop.headers.cookie).toBeUndefined();
    expect(hop.headers["content-type"]).toBeUndefined();
    expect(hop.headers["x-keep"]).toBe("1");
  });

  it("keeps method and body on a 307", async () => {
    const outcome = await httpRequest([server.hostPort])(makeInput({ method: "POST", url: server.url("/redirect?code=307&to=/echo"), body: "payload" }));
    expect(output(outcome).body).toMatchObject({ method: "POST", body: "payload" });
  });

  it("stops after 5 redirects", async () => {
    const outcome = await httpRequest([server.hostPort])(makeInput({ url: server.url("/loop") }));
    expect(outcome).toEqual({ kind: "failure", retryable: false, message: "too many redirects (more than 5)" });
    expect(seen).toHaveLength(6);
  });

  it("refuses a redirect to another scheme", async () => {
    const outcome = await httpRequest([server.hostPort])(makeInput({ url: server.url(`/redirect?to=${encodeURIComponent("file:///etc/passwd")}`) }));
    expect(outcome).toEqual({ kind: "failure", retryable: false, message: "redirect to a non-http(s) URL" });
  });
});

describe("http_request failure classification", () => {
  it.each([
    [500, true],
    [503, true],
    [429, true],
    [404, false],
    [400, false],
    [401, false],
  ])("HTTP %i is retryable=%s and names the status and the server's message", async (status, retryable) => {
    const outcome = await httpRequest([server.hostPort])(makeInput({ url: server.url(`/status?${status}`) }));
    expect(outcome).toMatchObject({ kind: "failure", retryable });
    expect(outcome.kind === "failure" && outcome.message).toBe(`HTTP ${status} ${http.STATUS_CODES[status]}: status ${status} as asked`);
  });

  it("connection refused is retryable", async () => {
    const closed = await startServer(() => {});
    const port = closed.port;
    await closed.close();
    const outcome = await httpRequest([`127.0.0.1:${port}`])(makeInput({ url: `http://127.0.0.1:${port}/` }));
    expect(outcome).toEqual({ kind: "failure", retryable: true, message: "network error: ECONNREFUSED" });
  });

  it("a timeout is retryable and ends the request promptly", async () => {
    const started = performance.now();
    const outcome = await httpRequest([server.hostPort])(makeInput({ url: server.url("/hang"), timeout_ms: 150 }));
    expect(outcome).toEqual({ kind: "failure", retryable: true, message: "request timed out after 150 ms" });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("the step's signal aborts the request (retryable)", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const outcome = await httpRequest([server.hostPort])(makeInput({ url: server.url("/hang") }, { signal: controller.signal }));
    expect(outcome).toEqual({ kind: "failure", retryable: true, message: "request aborted" });
  });

  it("an unknown host is a retryable DNS failure", async () => {
    const outcome = await httpRequest([], fakeLookup({}))(makeInput({ url: "http://nowhere.test/" }));
    expect(outcome).toEqual({ kind: "failure", retryable: true, message: "dns lookup of nowhere.test failed: ENOTFOUND" });
    expect(connectCount()).toBe(0);
  });
});

describe("http_request response body cap (1 MiB, then a permanent failure)", () => {
  const tooLarge = { kind: "failure", retryable: false, message: "response body exceeds 1 MiB" };

  it("accepts exactly 1 MiB", async () => {
    const { body } = output(await httpRequest([server.hostPort])(makeInput({ url: server.url(`/size?bytes=${MAX_RESPONSE_BYTES}`) })));
    expect((body as string).length).toBe(MAX_RESPONSE_BYTES);
  });

  it("refuses a declared Content-Length above the cap", async () => {
    expect(await httpRequest([server.hostPort])(makeInput({ url: server.url(`/size?bytes=${MAX_RESPONSE_BYTES + 1}`) }))).toEqual(tooLarge);
  });

  it("stops reading a chunked body at the cap", async () => {
    expect(await httpRequest([server.hostPort])(makeInput({ url: server.url(`/size?bytes=${MAX_RESPONSE_BYTES * 3}&chunked=1`) }))).toEqual(tooLarge);
  });

  it("counts decoded bytes, so a gzip bomb stops at the cap", async () => {
    expect(await httpRequest([server.hostPort])(makeInput({ url: server.url("/gzip-bomb") }))).toEqual(tooLarge);
  });
});

describe("http_request params", () => {
  it.each([
    [null, "invalid params: url: required"],
    [{}, "invalid params: url: required"],
    [["http://a.test/"], "invalid params: expected an object"],
    [{ url: 42 }, "invalid params: url: must be a string"],
    [{ url: "not a url" }, "invalid params: url: not a valid URL"],
    [{ url: "ftp://files.test/x" }, "invalid params: url: scheme must be http or https"],
    [{ url: "file:///etc/passwd" }, "invalid params: url: scheme must be http or https"],
    [{ url: "http://a.test/", method: "FETCH" }, "invalid params: method: must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"],
    [{ url: "http://a.test/", headers: { Host: "b.test" } }, "invalid params: headers.Host: set by the engine"],
    [{ url: "http://a.test/", headers: { "bad header": "x" } }, "invalid params: headers.bad header: not a valid header"],
    [{ url: "http://a.test/", headers: { "x-a": "line\nbreak" } }, "invalid params: headers.x-a: not a valid header"],
    [{ url: "http://a.test/", timeout_ms: 0 }, "invalid params: timeout_ms: must be > 0"],
  ])("%j fails permanently: %s", async (params, message) => {
    const lookup = fakeLookup({});
    expect(await httpRequest([], lookup)(makeInput(params))).toEqual({ kind: "failure", retryable: false, message });
    expect(lookup.asked).toEqual([]);
    expect(connectCount()).toBe(0);
  });

  it("null optional params read as absent", async () => {
    const outcome = await httpRequest([server.hostPort])(makeInput({ url: server.url("/echo"), method: null, headers: null, body: null, timeout_ms: null }));
    expect(output(outcome).body).toMatchObject({ method: "GET", body: "" });
  });
});
