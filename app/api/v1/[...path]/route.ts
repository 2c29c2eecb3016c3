// REST v1 (wire-format E): every path under /api/v1 goes to the one dispatcher in server/rest.
import { handleRest } from "../../../../server/rest/index.ts";
import { services } from "../../../../server/services.ts";

function handler(request: Request): Promise<Response> {
  return handleRest(request, services());
}

export { handler as GET, handler as POST, handler as PUT, handler as PATCH, handler as DELETE };
