// Each built-in's params schema (the one its handler parses with and the editor draws): accepts
// the params wire-format D documents, refuses bad ones with the very message the handler fails with.
import { describe, expect, it } from "vitest";
import { BUILTIN_HANDLERS } from "../sequence/validate.ts";
import { HANDLER_DESCRIPTORS, handlerDescriptor } from "./descriptors.ts";
import { createEmitEvent } from "./emit-event.ts";
import { parseParams } from "./params.ts";
import { createBuiltInHandlers } from "./registry.ts";
import { makeInput } from "./test-support.ts";

const registry = createBuiltInHandlers({ httpAllow: [] });
const schema = (name: string) => handlerDescriptor(name)!.params;
const UUID = "0190a5d4-7c3e-7d2a-9f1b-2c3d4e5f6a7b";

describe("handler descriptors", () => {
  it("describe exactly the registered built-ins, and what validation calls built in", () => {
    const names = HANDLER_DESCRIPTORS.map((d) => d.name).sort();
    expect(names).toEqual(registry.names().sort());
    expect(names).toEqual([...BUILTIN_HANDLERS].sort());
    for (const descriptor of HANDLER_DESCRIPTORS) expect(descriptor.description).not.toBe("");
  });

  it("has none for a worker's handler", () => {
    expect(handlerDescriptor("charge_card")).toBeUndefined();
    expect(handlerDescriptor("constructor")).toBeUndefined();
  });
});

describe("the schemas accept the documented params", () => {
  it.each([
    ["noop", {}, {}],
    ["log", { message: "hi", level: "warn" }, { message: "hi", level: "warn" }],
    ["log", {}, { message: "no message", level: "info" }],
    ["log", { message: null, level: "shout" }, { message: null, level: "info" }],
    ["sleep", { duration_ms: 1000 }, { duration_ms: 1000 }],
    ["sleep", { duration_ms: -5 }, { duration_ms: 100 }],
    ["fail", {}, { message: "forced failure", retryable: false }],
    ["fail", { message: { code: 7 }, retryable: true }, { message: '{"code":7}', retryable: true }],
    ["send_signal", { instance_id: UUID, signal_type: "pause" }, { instance_id: UUID, signal_type: "pause" }],
    ["send_signal", { instance_id: UUID, signal_type: { custom: "go" }, payload: 1 }, { instance_id: UUID, signal_type: { custom: "go" }, payload: 1 }],
    ["query_instance", { instance_id: UUID }, { instance_id: UUID }],
    ["emit_event", { trigger_slug: "t", data: { a: 1 }, dedupe_key: "k", dedupe_scope: "parent" }, { trigger_slug: "t", data: { a: 1 }, dedupe_key: "k", dedupe_scope: "parent" }],
    ["self_modify", { blocks: [], position: 2 }, { blocks: [], position: 2 }],
    ["human_review", {}, {}],
  ])("%s %j", (name, params, parsed) => {
    expect(schema(name).parse(params)).toMatchObject(parsed);
  });

  it("http_request: method in any case, headers lower-cased, defaults filled", () => {
    const parsed = schema("http_request").parse({ url: "https://a.test/x", method: "post", headers: { "X-Id": 7 }, body: { a: 1 } }) as Record<string, unknown>;
    expect({ ...parsed, url: String(parsed.url) }).toEqual({ url: "https://a.test/x", method: "POST", headers: { "x-id": "7" }, body: { a: 1 }, timeout_ms: 30_000 });
  });

  it("llm_call: the completions URL and its default timeout", () => {
    const parsed = schema("llm_call").parse({ base_url: "https://llm.test/v1/", model: "m", messages: [{ role: "user", content: "hi" }] }) as Record<string, unknown>;
    expect(String(parsed.base_url)).toBe("https://llm.test/v1/chat/completions");
    expect(parsed.timeout_ms).toBe(60_000);
  });
});

describe("the schemas refuse bad params with the handler's own message", () => {
  const messages = [{ role: "user", content: "hi" }];
  it.each([
    ["http_request", {}, "invalid params: url: required"],
    ["http_request", { url: "ftp://a.test/" }, "invalid params: url: scheme must be http or https"],
    ["http_request", { url: "http://a.test/", method: "FETCH" }, "invalid params: method: must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"],
    ["http_request", { url: "http://a.test/", headers: { "bad header": "x" } }, "invalid params: headers.bad header: not a valid header"],
    ["http_request", { url: "http://a.test/", headers: { "x-a": "line\nbreak" } }, "invalid params: headers.x-a: not a valid header"],
    ["http_request", { url: "http://a.test/", headers: { Connection: "close" } }, "invalid params: headers.Connection: set by the engine"],
    ["http_request", { url: "http://a.test/", timeout_ms: -1 }, "invalid params: timeout_ms: must be > 0"],
    ["llm_call", { base_url: "http://x.test", messages }, "invalid params: model: required"],
    ["llm_call", { base_url: "http://x.test", model: "m", messages: [] }, "invalid params: messages: must not be empty"],
    ["llm_call", { base_url: "http://x.test", model: "m", messages, max_tokens: 1.5 }, "invalid params: max_tokens: must be an integer"],
  ])("%s %j: %s", async (name, params, message) => {
    const refused = parseParams(schema(name), params);
    expect(refused).toEqual({ ok: false, outcome: { kind: "failure", retryable: false, message } });
    expect(await registry.get(name)!(makeInput(params))).toEqual({ kind: "failure", retryable: false, message });
  });

  it.each([
    [{}, "emit_event needs trigger_slug (or sequence_name)"],
    [{ trigger_slug: "" }, "emit_event needs trigger_slug (or sequence_name)"],
    [{ trigger_slug: "t", dedupe_scope: "global" }, 'dedupe_scope must be "parent" or "tenant"'],
  ])("emit_event %j: %s", async (params, message) => {
    const parsed = schema("emit_event").safeParse(params);
    expect(parsed.success ? null : parsed.error.issues[0]!.message).toBe(message);
    expect(await createEmitEvent()(makeInput(params))).toEqual({ kind: "failure", retryable: false, message });
  });

  it.each([
    [{ instance_id: "not-a-uuid", signal_type: "pause" }, "target instance not found"],
    [{ instance_id: UUID, signal_type: "custom:x" }, "invalid signal_type: unknown variant `custom:x`, expected one of `pause`, `resume`, `cancel`, `update_context`, `custom`"],
    [{ instance_id: UUID, signal_type: { custom: 1 } }, "invalid signal_type: invalid type: expected a string for `custom`"],
  ])("send_signal %j: %s", async (params, message) => {
    expect(schema("send_signal").safeParse(params).success).toBe(false);
    expect(await registry.get("send_signal")!(makeInput(params))).toEqual({ kind: "failure", retryable: false, message });
  });

  it("query_instance: an unusable id is refused by the schema and fails the step for good", async () => {
    expect(schema("query_instance").safeParse({ instance_id: 42 }).success).toBe(false);
    expect(await registry.get("query_instance")!(makeInput({ instance_id: 42 }))).toEqual({
      kind: "failure", retryable: false, message: "query_instance needs instance_id, a UUID",
    });
  });

  it("self_modify: position must be a non-negative integer", () => {
    expect(schema("self_modify").safeParse({ blocks: [], position: -1 }).success).toBe(false);
    expect(schema("self_modify").safeParse({ blocks: [], position: 1.5 }).success).toBe(false);
  });
});
