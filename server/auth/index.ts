// next-auth v5: credentials sign-in, JWT sessions carrying the user id. Roles are not put in the
// token: they are read from the database on every request, so a revoked role takes effect at once.
import NextAuth, { CredentialsSignin, type DefaultSession } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { isAppError } from "../../engine/errors.ts";
import { services } from "../services.ts";
import { authenticateCredentials } from "./credentials.ts";

declare module "next-auth" {
  interface Session {
    user: { id: string } & DefaultSession["user"];
  }
}

/** Error codes the sign-in page turns into messages. */
export class WrongCredentials extends CredentialsSignin {
  code = "wrong_credentials";
}
export class TooManyAttempts extends CredentialsSignin {
  code = "rate_limited";
}

function clientIp(request: Request): string | null {
  const forwarded = request.headers.get("x-forwarded-for");
  return forwarded?.split(",")[0]?.trim() || request.headers.get("x-real-ip") || null;
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
            ip: clientIp(request),
          });
        } catch (error) {
          if (isAppError(error, "rate_limited")) throw new TooManyAttempts();
          if (isAppError(error, "unauthorized")) throw new WrongCredentials();
          throw error;
        }
      },
    }),
  ],
  callbacks: {
    jwt({ token, user }) {
      if (user?.id) token.sub = user.id;
      return token;
    },
    session({ session, token }) {
      if (token.sub) session.user.id = token.sub;
      return session;
    },
  },
});
