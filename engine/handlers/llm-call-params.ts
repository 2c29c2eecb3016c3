// llm_call's params, browser-safe: the handler parses with this schema and the editor draws its form from it.
import { z } from "zod";
import { expected, httpUrl, optional, timeoutMs } from "./params.ts";

export const LlmCallParams = z.object({
  base_url: z
    .string({ error: expected("a string") })
    .transform((base) => `${base.replace(/\/+$/, "")}/chat/completions`)
    .pipe(httpUrl)
    .describe("OpenAI-compatible API base, e.g. https://api.openai.com/v1"),
  api_key: optional(z.string({ error: expected("a string") })).describe("sent as a Bearer token"),
  model: z.string({ error: expected("a string") }).min(1, "required"),
  messages: z
    .array(z.record(z.string(), z.unknown()), { error: expected("an array of message objects") })
    .min(1, "must not be empty")
    .describe('chat messages, e.g. [{"role": "user", "content": "…"}]'),
  temperature: optional(z.number({ error: expected("a number") })),
  max_tokens: optional(z.number({ error: expected("an integer") }).int("must be an integer").positive("must be > 0")),
  // Completions are slow: a longer default than http_request's (the step `timeout` still applies).
  timeout_ms: timeoutMs(60_000).describe("request deadline in ms (default 60000)"),
});
