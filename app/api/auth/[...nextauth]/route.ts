import type { NextRequest } from "next/server";
import { auth, handlers } from "../../../../server/auth/index.ts";
import { identityOf, readSessionUser } from "../../../../server/auth/sessions.ts";
import { services } from "../../../../server/services.ts";

export const { POST } = handlers;

/**
 * next-auth's GET routes; its session endpoint reads only the token, so a token whose session has
 * ended (sign-out, password change, removal) is answered as no session, like every other door.
 */
export async function GET(request: NextRequest) {
  if (new URL(request.url).pathname.endsWith("/session") && !(await readSessionUser(services().prisma, identityOf(await auth())))) {
    return Response.json(null);
  }
  return handlers.GET(request);
}
