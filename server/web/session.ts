// Helpers for pages (React Server Components): a tRPC caller acting as the signed-in user, so
// pages answer exactly what the API answers.
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { createCaller } from "../api/root.ts";
import { createContext } from "../api/trpc.ts";
import { auth } from "../auth/index.ts";
import { identityOf, readSessionUser } from "../auth/sessions.ts";
import { services } from "../services.ts";

/**
 * The tRPC context of the signed-in user, made once per request; visitors (and ended sessions)
 * go to sign-in and come back afterwards.
 */
export const signedInContext = cache(async () => {
  // auth() first: it reads the cookies, which makes the page dynamic before services() is needed.
  const identity = identityOf(await auth());
  const user = await readSessionUser(services().prisma, identity);
  if (!user) {
    // proxy.ts passes the requested path along, since layouts cannot see it.
    const returnTo = (await headers()).get("x-bulkhead-path") ?? "/";
    redirect(`/signin?callbackUrl=${encodeURIComponent(returnTo)}`);
  }
  return createContext(services(), user.id, user);
});

/** The caller for the signed-in user (see signedInContext). */
export async function signedInCaller() {
  return createCaller(await signedInContext());
}

/** The signed-in user and their tenants, read once per request however many layouts ask. */
export const myAccount = cache(async () => (await signedInCaller()).account.me());
