// GET /instances/{id}/logs (wire-format V): the instance's log lines, oldest first, from its `log`
// steps and its workers' `logs`.
import { notFound } from "../../../engine/errors.ts";
import { json } from "../http.ts";
import { storeOwning, type RestContext } from "../route.ts";

export async function listInstanceLogs(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const lines = await (await storeOwning(context, "instance", id)).listLogLines(id);
  if (!lines) throw notFound("instance");
  return json(200, lines.map((line) => ({ block_id: line.blockId, ts: line.ts.toISOString(), level: line.level, message: line.message })));
}
