import { openLiveForSession } from "../../../../../../../server/live/session-streams.ts";

// The instance page's live stream: the signed-in member's, for the tenant in the path.
export function GET(request: Request, { params }: { params: Promise<{ tenant: string; id: string }> }) {
  return openLiveForSession(request, params);
}
