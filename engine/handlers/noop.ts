// `noop` (wire-format D): no params (NoopParams), output `{}`, never fails.
import { success, type Handler } from "./types.ts";

export const noop: Handler = async () => success({});
