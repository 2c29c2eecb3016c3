"use server";

import { AuthError, CredentialsSignin } from "next-auth";
import { signIn } from "../../../server/auth/index.ts";
import { safeReturnPath } from "../../../server/web/return-path.ts";

export interface SignInState {
  error: string | null;
  email: string;
}

export async function signInAction(_previous: SignInState, form: FormData): Promise<SignInState> {
  const email = String(form.get("email") ?? "");
  try {
    await signIn("credentials", {
      email,
      password: String(form.get("password") ?? ""),
      redirectTo: safeReturnPath(form.get("callbackUrl")),
    });
    return { error: null, email };
  } catch (error) {
    if (error instanceof CredentialsSignin) {
      const message =
        error.code === "rate_limited"
          ? "Too many failed sign-ins. Wait 15 minutes and try again."
          : "Wrong email or password.";
      return { error: message, email };
    }
    if (error instanceof AuthError) return { error: "Sign-in failed. Please try again.", email };
    throw error; // includes the redirect that signals success
  }
}
