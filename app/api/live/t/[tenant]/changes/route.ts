import { openChangeNoticesForSession } from "../../../../../../server/live/session-streams.ts";

// Lists' live updates: a `changed` event whenever the tenant's change feed moves on.
export function GET(request: Request, { params }: { params: Promise<{ tenant: string }> }) {
  return openChangeNoticesForSession(request, params);
}
