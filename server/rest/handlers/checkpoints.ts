// Checkpoints over REST (wire-format P): save, list (newest first, at most 100), the latest, and
// prune to the newest `keep`. Any instance state, terminal included. Another tenant's instance
// answers the missing instance's 404 on every route.
import { z } from "zod";
import { AppError, notFound } from "../../../engine/errors.ts";
import { checkSize } from "../../../engine/size-limits.ts";
import type { Checkpoint } from "../../../engine/storage/index.ts";
import { requiredJson, shapedBody } from "../body.ts";
import { json } from "../http.ts";
import { storeOwning, type RestContext } from "../route.ts";

const SaveRequest = z.object({ checkpoint_data: requiredJson("checkpoint_data") });
const PruneRequest = z.object({ keep: z.int().min(0).max(4_294_967_295) });
export const checkpointBody = shapedBody(SaveRequest, () => []);
export const pruneBody = shapedBody(PruneRequest, () => []);

const wire = (checkpoint: Checkpoint) => ({
  id: checkpoint.id, instance_id: checkpoint.instanceId, checkpoint_data: checkpoint.data ?? null, created_at: checkpoint.createdAt.toISOString(),
});

const store = (context: RestContext<unknown>) => storeOwning(context, "instance", context.params.id!);

export async function saveCheckpoint(context: RestContext<z.output<typeof SaveRequest>>): Promise<Response> {
  checkSize("checkpoint", context.body.checkpoint_data, { path: ["checkpoint_data"] });
  const id = await (await store(context)).saveCheckpoint(context.params.id!, context.body.checkpoint_data);
  if (!id) throw notFound("instance");
  return json(201, { id });
}

export async function listCheckpoints(context: RestContext<unknown>): Promise<Response> {
  const checkpoints = await (await store(context)).listCheckpoints(context.params.id!);
  if (!checkpoints) throw notFound("instance");
  return json(200, checkpoints.map(wire));
}

export async function latestCheckpoint(context: RestContext<unknown>): Promise<Response> {
  const id = context.params.id!;
  const checkpoints = await (await store(context)).listCheckpoints(id, 1);
  if (!checkpoints) throw notFound("instance");
  if (checkpoints.length === 0) throw new AppError("not_found", `checkpoint for instance ${id}`);
  return json(200, wire(checkpoints[0]!));
}

export async function pruneCheckpoints(context: RestContext<z.output<typeof PruneRequest>>): Promise<Response> {
  const count = await (await store(context)).pruneCheckpoints(context.params.id!, context.body.keep);
  if (count === null) throw notFound("instance");
  return json(200, { count });
}
