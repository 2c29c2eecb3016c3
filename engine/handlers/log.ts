// `log` (wire-format D): writes `message` to the engine log and to the instance's log lines
// (V: GET /instances/{id}/logs), and echoes it; never fails.
import { LogParams } from "./basic-params.ts";
import { paramsObject, success, type Handler } from "./types.ts";

export const log: Handler = async (input) => {
  const { message, level } = LogParams.parse(paramsObject(input.params) ?? {});
  input.log[level]({ tenant_id: input.tenantId, instance_id: input.instanceId, block_id: input.blockId, message }, "log step");
  const text = typeof message === "string" ? message : (JSON.stringify(message) ?? "null");
  await input.instances.appendLog({ blockId: input.blockId, level, message: text });
  return success({ message });
};
