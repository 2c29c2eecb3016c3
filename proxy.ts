// Passes the requested path to server components (layouts cannot read it otherwise), so a
// visitor sent to sign-in comes back to the page they asked for. Authorization is not done
// here: every page and procedure checks it where the data is read.
import { NextResponse, type NextRequest } from "next/server";

export function proxy(request: NextRequest) {
  const headers = new Headers(request.headers);
  headers.set("x-bulkhead-path", request.nextUrl.pathname + request.nextUrl.search);
  return NextResponse.next({ request: { headers } });
}

export const config = {
  matcher: ["/((?!api/|_next/|favicon.ico).*)"],
};
