// Health routes (E.1, E.2): public, never behind auth.
import { AppError } from "../../../engine/errors.ts";
import { empty } from "../http.ts";
import type { RestContext } from "../route.ts";

/** A backend that has not answered `SELECT 1` by then counts as down. */
const READY_TIMEOUT_MS = 2000;

export async function live(): Promise<Response> {
  return empty(200);
}

/**
 * Ready when every registered storage backend answers (the primary also holds the control plane).
 * The scheduler runs in the engine process, which this web process cannot see; the engine's
 * own health is reported there.
 */
export async function ready({ services, log }: RestContext<unknown>): Promise<Response> {
  const down = await services.storage.unreachableBackends(READY_TIMEOUT_MS);
  if (down.length > 0) {
    log.warn({ backends: down }, "storage backends unreachable");
    // Backend ids are not for anonymous callers: they are in the log.
    throw new AppError("unavailable", "storage is not reachable");
  }
  return empty(200);
}
