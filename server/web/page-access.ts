// Who may open a page, decided before Next.js renders anything (proxy.ts). A page the caller may
// not see, and a path that is no page, are served as the not-found document of a path no route
// matches, so a forbidden page and a missing one are the same response, headers included; a
// signed-out visitor is redirected to sign-in with an empty body, for any path, existing or not. The pages check again where they read their data.
import { readSessionUser, type SessionIdentity } from "../auth/sessions.ts";
import { roleIn } from "../control/users.ts";
import type { Services } from "../services.ts";

/** What opening a path asks of the caller. */
export type PageAccess =
  | { kind: "public" }
  | { kind: "signed-in" }
  | { kind: "operator" }
  | { kind: "tenant"; tenantId: string; admin: boolean };

const PUBLIC = /^\/(signin|signout|invite)(\/|$)/;
const TENANT = /^\/t\/([^/]+)(\/.*)?$/;
const TENANT_ADMIN_PAGES = /^\/(settings)(\/|$)/;

/**
 * Every page of the app (every page.tsx under app/, route groups left out, `[name]` for one segment; a test
 * keeps it in step). A signed-in caller's path that is none of these is refused here like a
 * forbidden one, so missing and forbidden pages are the same response, headers included.
 */
export const PAGES = [
  "/", "/account",
  "/ops", "/ops/audit", "/ops/breakers", "/ops/fairness", "/ops/fairness/[tenantId]", "/ops/moves", "/ops/resources",
  "/ops/tenants/[id]", "/ops/tenants/new", "/ops/workers",
  "/t/[tenant]", "/t/[tenant]/approvals", "/t/[tenant]/breakers", "/t/[tenant]/failed", "/t/[tenant]/instances",
  "/t/[tenant]/instances/[id]", "/t/[tenant]/schedules", "/t/[tenant]/sequences", "/t/[tenant]/sequences/[id]",
  "/t/[tenant]/sequences/new", "/t/[tenant]/settings", "/t/[tenant]/workers",
  "/invite/[token]", "/signin", "/signout",
] as const;

const PAGE_PATTERNS = PAGES.map((page) => new RegExp(`^${page.replace(/\[[^\]/]+\]/g, "[^/]+")}/?$`));

/** Whether a page of the app answers `pathname`. */
export const isPage = (pathname: string) => PAGE_PATTERNS.some((pattern) => pattern.test(pathname));

/** The access a path needs; every page not named here needs only a signed-in user. */
export function pageAccess(pathname: string): PageAccess {
  if (PUBLIC.test(pathname)) return { kind: "public" };
  if (pathname === "/ops" || pathname.startsWith("/ops/")) return { kind: "operator" };
  const tenant = TENANT.exec(pathname);
  if (tenant) return { kind: "tenant", tenantId: decodeURIComponent(tenant[1]!), admin: TENANT_ADMIN_PAGES.test(tenant[2] ?? "") };
  return { kind: "signed-in" };
}

export type PageDecision = "render" | "sign-in" | "not-found";

/** Whether the caller the session names may open the path: at most two queries, none for a public page. */
export async function decidePage(services: Services, identity: SessionIdentity | null, pathname: string): Promise<PageDecision> {
  const access = pageAccess(pathname);
  if (access.kind === "public") return "render";
  const user = await readSessionUser(services.prisma, identity);
  if (!user) return "sign-in";
  if (!isPage(pathname)) return "not-found";
  switch (access.kind) {
    case "signed-in":
      return "render";
    case "operator":
      return user.isOperator ? "render" : "not-found";
    case "tenant": {
      const role = await roleIn(services.prisma, access.tenantId, user.id);
      return role && (!access.admin || role === "admin") ? "render" : "not-found";
    }
  }
}
