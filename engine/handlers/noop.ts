// `noop` (wire-format D): no params, output `{}`, never fails.
import { success, type Handler } from "./types.ts";

export const noop: Handler = async () => success({});
