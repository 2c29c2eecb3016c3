"use server";

import { auth, signOut } from "../../../server/auth/index.ts";
import { endSession, identityOf } from "../../../server/auth/sessions.ts";
import { services } from "../../../server/services.ts";

/** Ends this browser's session, then lands on sign-in: the header's Sign out and the /signout page. */
export async function signOutAction(): Promise<void> {
  // The session's row goes first: a copy of the token is worthless from here on.
  const identity = identityOf(await auth());
  if (identity) await endSession(services().prisma, identity.sessionId);
  await signOut({ redirectTo: "/signin" });
}
