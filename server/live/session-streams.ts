// The web app's live streams (the instance page follows its instance by server push rather than
// a timer): the same stream as the REST route, for a signed-in member of the tenant named in the
// path. Signed out, not a member, no such tenant, no such instance or another tenant's: one and
// the same 404, as the page itself answers.
import { isAppError } from "../../engine/errors.ts";
import { UUID_PATTERN } from "../../engine/model.ts";
import { createLogger } from "../../engine/logger.ts";
import { auth } from "../auth/index.ts";
import { identityOf, readSessionUser } from "../auth/sessions.ts";
import { roleIn } from "../control/users.ts";
import { services } from "../services.ts";
import { pollMsOf } from "./instance-stream.ts";
import { openInstanceStream } from "./streams.ts";

const log = createLogger("web", process.env.BULKHEAD_LOG_LEVEL ?? "info");

const notFound = () => Response.json({ error: "not found" }, { status: 404 });

export async function openLiveForSession(request: Request, params: Promise<{ tenant: string; id: string }>): Promise<Response> {
  const { tenant, id } = await params;
  const user = await readSessionUser(services().prisma, identityOf(await auth()));
  if (!user || !UUID_PATTERN.test(id) || !(await roleIn(services().prisma, tenant, user.id))) return notFound();
  try {
    const store = await services().storage.tenant(tenant);
    if (!(await store.pollLive(id.toLowerCase(), null, 0))) return notFound();
    return openInstanceStream(services(), tenant, store, id.toLowerCase(), {
      pollMs: pollMsOf(new URL(request.url).searchParams.get("poll_ms")), signal: request.signal, log,
      lastEventId: request.headers.get("last-event-id"),
    });
  } catch (error) {
    if (isAppError(error, "not_found")) return notFound();
    if (isAppError(error, "unavailable")) return Response.json({ error: `unavailable: ${error.message}` }, { status: 503, headers: { "retry-after": "5" } });
    throw error;
  }
}
