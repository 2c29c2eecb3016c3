// `log` (wire-format D): writes `message` to the engine log and echoes it; never fails.
import { paramsObject, success, type Handler } from "./types.ts";

const LEVELS = ["debug", "info", "warn"] as const;
type Level = (typeof LEVELS)[number];

export const log: Handler = async (input) => {
  const params = paramsObject(input.params) ?? {};
  // Only an absent message gets the default: a template that resolved to null echoes null.
  const message = params.message === undefined ? "no message" : params.message;
  // The handler never fails, so an unknown level logs at the default level instead.
  const level: Level = LEVELS.find((name) => name === params.level) ?? "info";
  input.log[level]({ tenant_id: input.tenantId, instance_id: input.instanceId, block_id: input.blockId, message }, "log step");
  return success({ message });
};
