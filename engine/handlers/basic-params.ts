// Params of the handlers that never refuse their params (noop, log, sleep, fail, human_review):
// a missing or unusable value reads as the default, so each schema parses any object.
// Browser-safe: the handlers parse with these schemas and the editor draws its forms from them.
import { z } from "zod";

export const NoopParams = z.looseObject({});

export const LOG_LEVELS = ["debug", "info", "warn"] as const;

export const LogParams = z.looseObject({
  // Only an absent message gets the default: a template that resolved to null echoes null.
  message: z.unknown().default("no message").describe("any JSON, echoed as the step's output"),
  // The handler never fails, so an unknown level logs at the default level instead.
  level: z.enum(LOG_LEVELS).catch("info").describe("log level (default info)"),
});

export const SleepParams = z.looseObject({
  // Anything but a non-negative integer means the default (D: sleep has no failure for bad params).
  duration_ms: z.number().int().min(0).catch(100).describe("how long to wait, in ms (default 100)"),
});

export const FailParams = z.looseObject({
  message: z
    .unknown()
    .optional()
    .transform((message) => (message === undefined || message === null ? "forced failure" : typeof message === "string" ? message : JSON.stringify(message)))
    .describe('the error message (default "forced failure")'),
  retryable: z.boolean().catch(false).describe("a retryable failure goes through the step's retry policy"),
});

/** human_review takes no params: its step's wait_for_input defines the question. */
export const HumanReviewParams = z.looseObject({});
