// `fail` (wire-format D): always fails with `message` (default "forced failure"); permanent
// unless `retryable: true`.
import { FailParams } from "./basic-params.ts";
import { failure, paramsObject, type Handler } from "./types.ts";

export const fail: Handler = async (input) => {
  const { message, retryable } = FailParams.parse(paramsObject(input.params) ?? {});
  return failure(retryable, message);
};
