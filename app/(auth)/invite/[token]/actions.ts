"use server";

// The invitation page's actions. Each one re-reads the session and leaves every rule (whose the
// invitation is, used once, the account's address) to server/control/invitations.ts.
import { AuthError } from "next-auth";
import { redirect } from "next/navigation";
import { isAppError } from "../../../../engine/errors.ts";
import { auth, signIn, signOut } from "../../../../server/auth/index.ts";
import { endSession, identityOf, readSessionUser } from "../../../../server/auth/sessions.ts";
import { acceptAsNewUser, acceptInvitation, declineInvitation, INVITE_PATH_PREFIX } from "../../../../server/control/invitations.ts";
import { services } from "../../../../server/services.ts";

const invitePath = (token: string) => `${INVITE_PATH_PREFIX}${token}`;

/** The token the form carries; anything that is not a short string is no token (and refused as one). */
function tokenOf(form: FormData): string {
  const token = form.get("token");
  return typeof token === "string" && token.length <= 64 ? token : "";
}

/** The signed-in user; a visitor signs in first and comes back to the invitation. */
async function invitee(token: string) {
  const user = await readSessionUser(services().prisma, identityOf(await auth()));
  if (!user) redirect(`/signin?callbackUrl=${encodeURIComponent(invitePath(token))}`);
  return user;
}

/**
 * A refused token sends the visitor back to the invitation page, which shows why from the state
 * of things: the invalid page (used, revoked, expired), or whose invitation it is.
 */
async function orBackToInvitation<T>(token: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isAppError(error, "not_found")) redirect(invitePath(token));
    throw error;
  }
}

export async function acceptAction(form: FormData): Promise<void> {
  const token = tokenOf(form);
  const user = await invitee(token);
  const joined = await orBackToInvitation(token, () => acceptInvitation(services().prisma, { token, userId: user.id }));
  redirect(`/t/${joined.tenantId}`);
}

export async function declineAction(form: FormData): Promise<void> {
  const token = tokenOf(form);
  const user = await invitee(token);
  await orBackToInvitation(token, () => declineInvitation(services().prisma, { token, userId: user.id }));
  redirect("/");
}

/** Signed in as another account: sign out (ending the session's row, as /signout does) and come back here. */
export async function signOutAndReturnAction(form: FormData): Promise<void> {
  const identity = identityOf(await auth());
  if (identity) await endSession(services().prisma, identity.sessionId);
  await signOut({ redirectTo: invitePath(tokenOf(form)) });
}

export interface NewAccountState {
  error: string | null;
}

const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * New to Bulkhead: the account for the invited address is made with the chosen password, joins,
 * and is signed in through next-auth as the sign-in form does (so the session is an ordinary one).
 */
export async function acceptAsNewUserAction(_previous: NewAccountState, form: FormData): Promise<NewAccountState> {
  const password = String(form.get("password") ?? "");
  let joined;
  try {
    joined = await acceptAsNewUser(services().prisma, { token: tokenOf(form), password });
  } catch (error) {
    if (isAppError(error, "not_found") || isAppError(error, "already_exists") || isAppError(error, "invalid_argument")) {
      return { error: sentence(error.message) };
    }
    throw error;
  }
  try {
    await signIn("credentials", { email: joined.email, password, redirectTo: `/t/${joined.tenantId}` });
  } catch (error) {
    // Joined already: only the sign-in failed (e.g. the address is throttled). The password works.
    if (error instanceof AuthError) return { error: "Your account is ready and you have joined, but signing in failed: sign in with your new password." };
    throw error; // includes the redirect that signals success
  }
  return { error: null };
}
