import http from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createBuiltInHandlers } from "./registry.ts";
import { makeInput, readRequestBody, startServer, type TestServer } from "./test-support.ts";
import type { Handler } from "./types.ts";

// A fake OpenAI-compatible provider: /v1/chat/completions answers per the requested model.
let provider: TestServer;
const requests: { url?: string; headers: http.IncomingHttpHeaders; body: Record<string, unknown> }[] = [];

beforeAll(async () => {
  provider = await startServer(async (request, response) => {
    const body = JSON.parse((await readRequestBody(request)) || "{}") as Record<string, unknown>;
    requests.push({ url: request.url, headers: request.headers, body });
    const reply = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    if (request.method !== "POST" || request.url !== "/v1/chat/completions") return reply(404, { error: { message: "unknown route" } });
    if (request.headers.authorization !== "Bearer sk-test") return reply(401, { error: { message: "invalid api key" } });
    switch (body.model) {
      case "overloaded":
        return reply(503, { error: { message: "overloaded, try later" } });
      case "limited":
        return reply(429, { error: { message: "rate limited" } });
      case "broken":
        return reply(200, { object: "not a completion" });
      default:
        return reply(200, {
          id: "chatcmpl-1",
          model: `${String(body.model)}-2025`,
          choices: [
            { index: 0, message: { role: "assistant", content: "Hello from the fake model" }, finish_reason: "stop" },
            { index: 1, message: { role: "assistant", content: "second choice" }, finish_reason: "length" },
          ],
          usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
        });
    }
  });
});
afterAll(() => provider.close());
afterEach(() => {
  requests.length = 0;
  vi.restoreAllMocks();
});

const llmCall = (httpAllow: string[]): Handler => createBuiltInHandlers({ httpAllow }).get("llm_call")!;
const messages = [{ role: "user", content: "Say hello" }];

describe("llm_call", () => {
  it("returns the first choice's content, model, usage and finish_reason", async () => {
    const outcome = await llmCall([provider.hostPort])(
      makeInput({ base_url: `${provider.url("/v1")}/`, api_key: "sk-test", model: "gpt-fake", messages, temperature: 0.2, max_tokens: 50 }),
    );
    expect(outcome).toEqual({
      kind: "success",
      output: {
        content: "Hello from the fake model",
        model: "gpt-fake-2025",
        usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
        finish_reason: "stop",
      },
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.headers["content-type"]).toBe("application/json");
    expect(requests[0]!.body).toEqual({ model: "gpt-fake", messages, temperature: 0.2, max_tokens: 50, stream: false });
  });

  it("is refused for a loopback base_url that is not allow-listed, without connecting", async () => {
    const connect = vi.spyOn(http.Agent.prototype, "createConnection");
    const outcome = await llmCall([])(makeInput({ base_url: provider.url("/v1"), api_key: "sk-test", model: "gpt-fake", messages }));
    expect(outcome).toEqual({ kind: "failure", retryable: false, message: "refused: 127.0.0.1 is a loopback address" });
    expect(connect).not.toHaveBeenCalled();
    expect(requests).toEqual([]);
  });

  it.each([
    ["overloaded", true, "HTTP 503 Service Unavailable: overloaded, try later", { code: "http_status", httpStatus: 503 }],
    ["limited", true, "HTTP 429 Too Many Requests: rate limited", { code: "http_status", httpStatus: 429 }],
    ["broken", false, "llm_call: the response is not a chat completion with a choice", {}],
  ])("model %s: retryable=%s, %s", async (model, retryable, message, details) => {
    const outcome = await llmCall([provider.hostPort])(makeInput({ base_url: provider.url("/v1"), api_key: "sk-test", model, messages }));
    expect(outcome).toEqual({ kind: "failure", retryable, message, ...details });
  });

  it("a rejected API key is permanent, and the key is not in the message", async () => {
    const outcome = await llmCall([provider.hostPort])(makeInput({ base_url: provider.url("/v1"), api_key: "sk-wrong", model: "gpt-fake", messages }));
    expect(outcome).toEqual({ kind: "failure", retryable: false, message: "HTTP 401 Unauthorized: invalid api key", code: "http_status", httpStatus: 401 });
  });

  it.each([
    [{ model: "m", messages }, "invalid params: base_url: required"],
    [{ base_url: "ftp://x.test", model: "m", messages }, "invalid params: base_url: scheme must be http or https"],
    [{ base_url: "http://x.test", messages }, "invalid params: model: required"],
    [{ base_url: "http://x.test", model: "m", messages: [] }, "invalid params: messages: must not be empty"],
    [{ base_url: "http://x.test", model: "m", messages: "hi" }, "invalid params: messages: must be an array of message objects"],
    [{ base_url: "http://x.test", model: "m", messages, max_tokens: 1.5 }, "invalid params: max_tokens: must be an integer"],
  ])("%j fails permanently: %s", async (params, message) => {
    expect(await llmCall([])(makeInput(params))).toEqual({ kind: "failure", retryable: false, message });
  });
});
