// Runs before Next.js routes a request. Two jobs:
// - A path that is not valid percent-encoded UTF-8 (`/api/v1/instances/%zz`) is a 400 here:
//   Next.js would otherwise fail decoding it into route parameters and answer a bare 500.
// - Pages get the requested path (layouts cannot read it otherwise), so a visitor sent to sign-in
//   comes back to the page they asked for. Authorization is not done here: every page and
//   procedure checks it where the data is read.
import { NextResponse, type NextRequest } from "next/server";

function decodable(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}

export function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  if (!decodable(pathname)) {
    return new NextResponse("Invalid URL: the path is not valid percent-encoded UTF-8", {
      status: 400, headers: { "content-type": "text/plain; charset=utf-8" },
    });
  }
  if (pathname.startsWith("/api/")) return NextResponse.next();
  const headers = new Headers(request.headers);
  headers.set("x-bulkhead-path", pathname + search);
  return NextResponse.next({ request: { headers } });
}

export const config = {
  matcher: ["/((?!_next/|favicon.ico).*)"],
};
