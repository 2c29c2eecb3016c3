import { handleTrpcRequest } from "../../../../server/api/handler.ts";
import { auth } from "../../../../server/auth/index.ts";
import { identityOf } from "../../../../server/auth/sessions.ts";
import { services } from "../../../../server/services.ts";

// The body cap (1 MiB) is checked first; the session is read only for a body that fits.
function handler(req: Request) {
  return handleTrpcRequest(req, { services, session: async () => identityOf(await auth()) });
}

export { handler as GET, handler as POST };
