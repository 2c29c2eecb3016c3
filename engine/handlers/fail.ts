// `fail` (wire-format D): always fails with `message` (default "forced failure"); permanent
// unless `retryable: true`.
import { failure, paramsObject, type Handler } from "./types.ts";

export const fail: Handler = async (input) => {
  const params = paramsObject(input.params) ?? {};
  const { message } = params;
  const text =
    message === undefined || message === null ? "forced failure" : typeof message === "string" ? message : JSON.stringify(message);
  return failure(params.retryable === true, text);
};
