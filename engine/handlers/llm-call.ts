// `llm_call`: one OpenAI-compatible chat completion (POST `${base_url}/chat/completions`) through
// the same guarded request code as http_request. Output: { content, model, usage, finish_reason }
// of the first choice.
import { z } from "zod";
import { sendOutbound, statusFailure, type OutboundGuard } from "./outbound-request.ts";
import { LlmCallParams } from "./llm-call-params.ts";
import { parseParams } from "./params.ts";
import { failure, success, type Handler } from "./types.ts";

const Completion = z.object({
  model: z.string().optional(),
  usage: z.unknown().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
});

export function createLlmCall(guard: OutboundGuard): Handler {
  return async (input) => {
    const parsed = parseParams(LlmCallParams, input.params);
    if (!parsed.ok) return parsed.outcome;
    const { base_url: url, api_key, model, messages, temperature, max_tokens, timeout_ms } = parsed.value;
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (api_key) headers.authorization = `Bearer ${api_key}`;
    const body = Buffer.from(JSON.stringify({ model, messages, temperature, max_tokens, stream: false }));
    const result = await sendOutbound({ tenantId: input.tenantId, method: "POST", url, headers, body, timeoutMs: timeout_ms, signal: input.signal }, guard);
    if (!result.ok) return failure(result.retryable, result.message);
    const rejected = statusFailure(result.response);
    if (rejected) return rejected;
    const completion = Completion.safeParse(result.response.body);
    // A 2xx that is not a completion will not become one on retry.
    if (!completion.success) return failure(false, "llm_call: the response is not a chat completion with a choice");
    const choice = completion.data.choices[0]!;
    input.log.debug({ block_id: input.blockId, host: url.host, model }, "llm_call");
    return success({
      content: choice.message.content ?? null,
      model: completion.data.model ?? model,
      usage: completion.data.usage ?? null,
      finish_reason: choice.finish_reason ?? null,
    });
  };
}
