// PAGES (server/web/page-access.ts) is every page of the app and nothing else: a page left out
// would answer "not found" to everyone, and a path listed without a page would answer Next.js's
// own not-found, which differs from a refused page's.
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isPage, PAGES } from "./page-access.ts";

const APP = path.resolve(import.meta.dirname, "../../app");

/** The route of every page.tsx under app/, route groups and app/api left out. */
function pagesOnDisk(): string[] {
  return readdirSync(APP, { recursive: true, encoding: "utf8" })
    .filter((file) => path.basename(file) === "page.tsx" && !file.startsWith("api"))
    .map((file) => `/${path.dirname(file).split(path.sep).filter((part) => part !== "." && !/^\(.+\)$/.test(part)).join("/")}`)
    .sort();
}

describe("the page list", () => {
  it("names exactly the pages under app/", () => {
    expect([...PAGES].sort()).toEqual(pagesOnDisk());
  });

  it("matches a page's own paths only", () => {
    for (const yes of ["/", "/ops", "/t/acme", "/t/acme/instances/0191", "/t/acme/settings/", "/invite/abc"]) expect({ yes, page: isPage(yes) }).toEqual({ yes, page: true });
    for (const no of ["/no-such-page", "/t/acme/settingz", "/t/acme/instances/a/b", "/ops/zzz", "/t", "/opsx"]) expect({ no, page: isPage(no) }).toEqual({ no, page: false });
  });
});
