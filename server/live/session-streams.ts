// The web app's live streams, for a signed-in member of the tenant named in the path: the
// instance page follows its instance with the REST route's stream, and lists refetch on the
// tenant's change notices, rather than on a timer. Signed out, not a member, no such tenant, no
// such instance or another tenant's: one and the same 404, as the page itself answers.
import { isAppError } from "../../engine/errors.ts";
import { UUID_PATTERN } from "../../engine/model.ts";
import { createLogger } from "../../engine/logger.ts";
import { decodeChangeCursor, type TenantStore } from "../../engine/storage/index.ts";
import { auth } from "../auth/index.ts";
import { identityOf, readSessionUser, type SessionIdentity } from "../auth/sessions.ts";
import { roleIn } from "../control/users.ts";
import { services } from "../services.ts";
import { pollMsOf } from "./instance-stream.ts";
import { stillMember, whileSessionHolds } from "./session-watch.ts";
import { openChangeNotices, openInstanceStream } from "./streams.ts";

const log = createLogger("web", process.env.BULKHEAD_LOG_LEVEL ?? "info");

const notFound = () => Response.json({ error: "not found" }, { status: 404 });

/**
 * The store of the tenant in the path, for a signed-in member of it, and the signal the stream
 * runs under: the request's, ended too once the session or the membership ends. Null for everyone else.
 */
async function memberStore(request: Request, tenant: string): Promise<{ store: TenantStore; signal: AbortSignal } | null> {
  const identity: SessionIdentity | null = identityOf(await auth());
  const user = await readSessionUser(services().prisma, identity);
  if (!user || !(await roleIn(services().prisma, tenant, user.id))) return null;
  const store = await services().storage.tenant(tenant);
  return { store, signal: whileSessionHolds(request.signal, () => stillMember(services().prisma, identity, tenant)) };
}

/** Opens a stream with `open`, answering its refusals as the REST routes do and "none of yours" as 404. */
async function answer(open: () => Promise<Response | null>): Promise<Response> {
  try {
    return (await open()) ?? notFound();
  } catch (error) {
    if (isAppError(error, "not_found")) return notFound();
    if (isAppError(error, "unavailable")) return Response.json({ error: `unavailable: ${error.message}` }, { status: 503, headers: { "retry-after": "5" } });
    if (isAppError(error, "rate_limited")) return Response.json({ error: `rate limit exceeded: ${error.message}` }, { status: 429, headers: { "retry-after": "5" } });
    if (isAppError(error, "invalid_argument")) return Response.json({ error: `invalid argument: ${error.message}` }, { status: 400 });
    throw error;
  }
}

export function openLiveForSession(request: Request, params: Promise<{ tenant: string; id: string }>): Promise<Response> {
  return answer(async () => {
    const { tenant, id } = await params;
    if (!UUID_PATTERN.test(id)) return null;
    const member = await memberStore(request, tenant);
    if (!member || !(await member.store.pollLive(id.toLowerCase(), null, 0))) return null;
    return openInstanceStream(services(), tenant, member.store, id.toLowerCase(), {
      pollMs: pollMsOf(new URL(request.url).searchParams.get("poll_ms")), signal: member.signal, log,
      lastEventId: request.headers.get("last-event-id"),
    });
  });
}

/** The tenant's change notices (lists refetch on them), from Last-Event-ID or the feed's end. */
export function openChangeNoticesForSession(request: Request, params: Promise<{ tenant: string }>): Promise<Response> {
  return answer(async () => {
    const { tenant } = await params;
    const member = await memberStore(request, tenant);
    if (!member) return null;
    const resume = request.headers.get("last-event-id");
    return openChangeNotices(services(), tenant, member.store, { after: resume ? decodeChangeCursor(resume) : null, signal: member.signal, log });
  });
}
