// next-auth v5: credentials sign-in, JWT sessions carrying the user id and a revocable session id
// (server/auth/sessions.ts). Roles are not put in the token: they are read from the database on
// every request, with the session, so a revoked role or an ended session takes effect at once.
import NextAuth, { CredentialsSignin, type DefaultSession } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { isAppError } from "../../engine/errors.ts";
import { services } from "../services.ts";
import { clientAddress, parseTrustedProxies } from "../web/client-address.ts";
import { authenticateCredentials, type SignedInUser } from "./credentials.ts";
import { endSession, startSession } from "./sessions.ts";

declare module "next-auth" {
  interface Session {
    user: { id: string } & DefaultSession["user"];
    /** The user_sessions row this session is (server/auth/sessions.ts). */
    sessionId?: string;
  }
}

/** Error codes the sign-in page turns into messages. */
export class WrongCredentials extends CredentialsSignin {
  code = "wrong_credentials";
}
export class TooManyAttempts extends CredentialsSignin {
  code = "rate_limited";
}

export const { handlers, auth, signIn, signOut } = NextAuth({
  trustHost: true,
  session: { strategy: "jwt" },
  pages: { signIn: "/signin" },
  logger: {
    // A wrong password is an answer, not a server error: keep it out of the error log.
    error(error) {
      if (error instanceof CredentialsSignin) return;
      console.error("[auth]", error);
    },
  },
  providers: [
    Credentials({
      credentials: { email: { label: "Email" }, password: { label: "Password", type: "password" } },
      async authorize(credentials, request) {
        try {
          return await authenticateCredentials(services().prisma, {
            email: String(credentials.email ?? ""),
            password: String(credentials.password ?? ""),
            ip: clientAddress(request.headers, parseTrustedProxies(services().config.BULKHEAD_TRUSTED_PROXIES)),
          });
        } catch (error) {
          if (isAppError(error, "rate_limited")) throw new TooManyAttempts();
          if (isAppError(error, "unauthorized")) throw new WrongCredentials();
          throw error;
        }
      },
    }),
  ],
  events: {
    // next-auth's own POST /api/auth/signout only clears the cookie: end the session row too, so
    // a copy of the token dies with it, as after the app's Sign out.
    async signOut(message) {
      const sid = "token" in message ? message.token?.sid : undefined;
      if (typeof sid === "string") await endSession(services().prisma, sid);
    },
  },
  callbacks: {
    // At sign-in (`user` is what authorize returned) the session gets its revocable row, made
    // only while the password just checked is still the user's; without one the token names no
    // session and reads as signed out. Later calls keep the token.
    async jwt({ token, user }) {
      if (user?.id) {
        token.sub = user.id;
        const passwordHash = (user as Partial<SignedInUser>).verifiedHash;
        token.sid = (await startSession(services().prisma, user.id, { passwordHash })) ?? undefined;
      }
      return token;
    },
    session({ session, token }) {
      if (token.sub) session.user.id = token.sub;
      if (typeof token.sid === "string") session.sessionId = token.sid;
      return session;
    },
  },
});
