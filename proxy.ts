// Runs before Next.js routes a request. Four jobs:
// - A path that is not valid percent-encoded UTF-8 (`/api/v1/instances/%zz`) is a 400 here:
//   Next.js would otherwise fail decoding it into route parameters and answer a bare 500.
// - Pages are opened only by who may see them (server/web/page-access.ts), decided before
//   anything renders: a signed-out visitor is redirected to sign-in (nothing of the page is rendered), and a page
//   the caller may not see is served as the not-found document of a path no route matches, the
//   same bytes as for a page that does not exist. The pages check again where they read data.
// - Pages get the requested path (layouts cannot read it otherwise), so a visitor sent to sign-in
//   comes back to the page they asked for.
// - Tenant export downloads (/api/ops/exports/…) are an operator's, for an export that is done:
//   anyone else, any other id or file, gets the not-found document of a path no route matches.
import { NextResponse, type NextRequest } from "next/server";
import { auth } from "./server/auth/index.ts";
import { identityOf } from "./server/auth/sessions.ts";
import { services } from "./server/services.ts";
import { decidePage } from "./server/web/page-access.ts";
import { EXPORT_DOWNLOADS, exportDownloadAllowed } from "./server/lifecycle/export-download.ts";

/** A folder name starting with "_" is private in the App Router, so this path is never a route. */
const NO_ROUTE = "/_no-route";

function decodable(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}

const pages = auth(async (request) => {
  const { pathname, search } = request.nextUrl;
  const decision = await decidePage(services(), identityOf(request.auth), pathname);
  if (decision === "sign-in") {
    const signIn = new URL("/signin", request.url);
    signIn.searchParams.set("callbackUrl", pathname + search);
    return new NextResponse(null, { status: 307, headers: { location: signIn.toString() } });
  }
  if (decision === "not-found") return NextResponse.rewrite(new URL(NO_ROUTE, request.url));
  const headers = new Headers(request.headers);
  headers.set("x-bulkhead-path", pathname + search);
  return NextResponse.next({ request: { headers } });
});

/** Tenant export downloads: the operator's own, else the same document as a path no route matches. */
const exportDownloads = auth(async (request) =>
  (await exportDownloadAllowed(services(), identityOf(request.auth), request.nextUrl.pathname))
    ? NextResponse.next()
    : NextResponse.rewrite(new URL(NO_ROUTE, request.url)),
);

export async function proxy(request: NextRequest) {
  if (!decodable(request.nextUrl.pathname)) {
    return new NextResponse("Invalid URL: the path is not valid percent-encoded UTF-8", {
      status: 400, headers: { "content-type": "text/plain; charset=utf-8" },
    });
  }
  const onApi = request.nextUrl.pathname.startsWith("/api/");
  if (onApi && !request.nextUrl.pathname.startsWith(EXPORT_DOWNLOADS)) return NextResponse.next();
  const response = await (onApi ? exportDownloads : pages)(request, {} as never);
  // next-auth's wrapper re-issues the session cookie on every response it passes; a page (or a
  // prefetch of one) finishing after a sign-out would set it again. Pages never set it: sign-in does.
  response?.headers.delete("set-cookie");
  return response ?? NextResponse.next();
}

// The icons (app/favicon.ico, app/icon.svg) are public files: a signed-out page asks for them too.
export const config = {
  matcher: ["/((?!_next/|favicon.ico|icon.svg).*)"],
};
