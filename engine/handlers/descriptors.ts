// What each built-in handler takes, for whoever must know without running it: the editor draws
// its params forms from these schemas, which are the very ones the handlers parse with.
// Browser-safe: only the *-params modules, never handler code (the web imports only this file).
import type { z } from "zod";
import { FailParams, HumanReviewParams, LogParams, NoopParams, SleepParams } from "./basic-params.ts";
import { EmitEventParams, QueryInstanceParams, SelfModifyParams, SendSignalParams } from "./coordination-params.ts";
import { HttpRequestParams } from "./http-request-params.ts";
import { LlmCallParams } from "./llm-call-params.ts";

export interface HandlerDescriptor {
  name: string;
  description: string;
  params: z.ZodType;
}

export const HANDLER_DESCRIPTORS: readonly HandlerDescriptor[] = [
  { name: "noop", description: "Does nothing; outputs {}.", params: NoopParams },
  { name: "log", description: "Writes a message to the engine log and outputs it.", params: LogParams },
  { name: "sleep", description: "Waits, then outputs {slept_ms}.", params: SleepParams },
  { name: "fail", description: "Always fails with a message.", params: FailParams },
  { name: "http_request", description: "One outbound HTTP call; outputs {status, headers, body}.", params: HttpRequestParams },
  { name: "llm_call", description: "One OpenAI-compatible chat completion; outputs {content, model, usage, finish_reason}.", params: LlmCallParams },
  { name: "send_signal", description: "Sends a signal to another instance of this tenant.", params: SendSignalParams },
  { name: "query_instance", description: "Reads another instance of this tenant.", params: QueryInstanceParams },
  { name: "emit_event", description: "Starts a child instance through a trigger or a sequence name.", params: EmitEventParams },
  { name: "self_modify", description: "Adds blocks to this instance after this step.", params: SelfModifyParams },
  { name: "human_review", description: "Waits for a person's answer (set its question under Wait for input).", params: HumanReviewParams },
];

const BY_NAME = new Map(HANDLER_DESCRIPTORS.map((descriptor) => [descriptor.name, descriptor]));

/** The built-in handler of that name; undefined for a worker's handler. */
export function handlerDescriptor(name: string): HandlerDescriptor | undefined {
  return BY_NAME.get(name);
}
