"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ChangeError, ConfirmButton } from "../../_components/confirm-button";
import { QueryError } from "../../_components/query-error";
import { useTRPC } from "../../_components/trpc";

/** How many places the user is signed in, and "Sign out everywhere", which ends them all, this one included. */
export function SessionsPanel() {
  const trpc = useTRPC();
  const sessions = useQuery(trpc.account.sessions.queryOptions());
  const [leaving, setLeaving] = useState(false);
  const signOut = useMutation(
    trpc.account.signOutEverywhere.mutationOptions({
      onSuccess: () => {
        setLeaving(true);
        window.location.assign("/signin?notice=signed-out-everywhere");
      },
    }),
  );

  let count;
  if (sessions.error) count = <QueryError error={sessions.error} />;
  else if (!sessions.data) count = <div className="skeleton" aria-busy="true" aria-label="Loading sessions" />;
  else if (sessions.data.live <= 1) count = <p>You are signed in on this browser only.</p>;
  else count = <p>You are signed in on {sessions.data.live} browsers or devices, this one included.</p>;

  return (
    <>
      {count}
      <p className="muted">
        Signing out everywhere ends every session of your account at once, wherever it is, including a copied session cookie.
        Your password stays the same: change it above if someone else may know it.
      </p>
      <ChangeError what="sign out everywhere" error={signOut.error} />
      <ConfirmButton
        label="Sign out everywhere"
        question="Sign out on every browser and device, this one included?"
        prominent
        pending={signOut.isPending || leaving}
        pendingLabel="Signing out…"
        onConfirm={() => signOut.mutate()}
      />
    </>
  );
}
