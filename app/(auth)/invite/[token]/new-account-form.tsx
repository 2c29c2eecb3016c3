"use client";

import { useActionState } from "react";
import { acceptAsNewUserAction, type NewAccountState } from "./actions";

/** New to Bulkhead: choose a password for the invited address, and accept. */
export function NewAccountForm({ token, email }: { token: string; email: string }) {
  const [state, action, pending] = useActionState<NewAccountState, FormData>(acceptAsNewUserAction, { error: null });
  return (
    <form action={action} aria-label="Choose a password and accept">
      {state.error && (
        <div className="alert alert-error" role="alert">
          {state.error}
        </div>
      )}
      <input type="hidden" name="token" value={token} />
      {/* The address is the invitation's, not to be changed; shown for password managers too. */}
      <div className="field">
        <label htmlFor="new-email">Email</label>
        <input className="input" id="new-email" name="email" type="email" autoComplete="username" value={email} readOnly />
      </div>
      <div className="field">
        <label htmlFor="new-password">Choose a password</label>
        <input className="input" id="new-password" name="password" type="password" autoComplete="new-password" minLength={8} required />
      </div>
      <button className="btn btn-primary btn-block" type="submit" disabled={pending}>
        {pending ? "Creating your account…" : "Create account and accept"}
      </button>
    </form>
  );
}
