"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ChangeError } from "../../_components/confirm-button";
import { useTRPC } from "../../_components/trpc";

/** Ends every session of an account, by email: for a session that may be in the wrong hands. */
export function SignOutUserCard() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState("");
  const [done, setDone] = useState<{ email: string; ended: number } | null>(null);
  const signOut = useMutation(
    trpc.ops.users.signOutEverywhere.mutationOptions({ onSettled: () => queryClient.invalidateQueries(trpc.ops.audit.pathFilter()) }),
  );

  return (
    <section className="card" aria-labelledby="sign-out-user-heading">
      <h2 id="sign-out-user-heading">Sign a user out everywhere</h2>
      <p className="muted">
        Ends every session of the account at once: each of its browsers and devices is signed out on its next request. The
        password stays; if it may be known to someone else, have the user change it after signing in again.
      </p>
      {done && (
        <p className="alert alert-ok" role="status">
          {done.ended === 0
            ? `${done.email} had no live sessions: nothing to end.`
            : `Signed ${done.email} out everywhere: ${done.ended} ${done.ended === 1 ? "session" : "sessions"} ended.`}
        </p>
      )}
      <ChangeError what="sign the user out" error={signOut.error} />
      <form
        className="form-row"
        aria-label="Sign a user out everywhere"
        onSubmit={(event) => {
          event.preventDefault();
          setDone(null);
          signOut.mutate(
            { email },
            {
              onSuccess: (result) => {
                setDone(result);
                setEmail("");
              },
            },
          );
        }}
      >
        <label>
          User email
          <input
            className="input"
            name="email"
            type="email"
            required
            maxLength={254}
            autoComplete="off"
            spellCheck={false}
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        </label>
        <button className="btn btn-primary" type="submit" disabled={signOut.isPending}>
          {signOut.isPending ? "Signing out…" : "Sign out everywhere"}
        </button>
      </form>
    </section>
  );
}
