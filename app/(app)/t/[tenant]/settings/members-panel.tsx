"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { ChangeError, ConfirmButton } from "../../../../_components/confirm-button";
import { OneTimeSecret } from "./one-time-secret";

type Role = "member" | "admin";

export function MembersPanel({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const members = useQuery(trpc.members.list.queryOptions({ tenantId }));
  const invalidate = () => queryClient.invalidateQueries(trpc.members.pathFilter());
  const setRole = useMutation(trpc.members.setRole.mutationOptions({ onSettled: invalidate }));
  const remove = useMutation(trpc.members.remove.mutationOptions({ onSettled: invalidate }));

  // After stepping down or leaving, this page is no longer yours: go where you still have access,
  // and refresh so the tabs and tenant switcher follow.
  const leave = (href: string) => {
    router.push(href);
    router.refresh();
  };

  if (members.error) return <QueryError error={members.error} />;
  if (!members.data) return <div className="skeleton" aria-busy="true" aria-label="Loading members" />;
  return (
    <>
      <ChangeError what="change the role" error={setRole.error} />
      <ChangeError what="remove the member" error={remove.error} />
      {members.data.length === 0 ? (
        <p className="empty">No members yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Members">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Member since</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {members.data.map((m) => {
                const other: Role = m.role === "admin" ? "member" : "admin";
                const roleLabel = other === "admin" ? "Make admin" : "Make member";
                const changing = setRole.isPending && setRole.variables?.userId === m.id;
                const changeRole = () =>
                  setRole.mutate(
                    { tenantId, userId: m.id, role: other },
                    { onSuccess: () => m.isYou && leave(`/t/${tenantId}`) },
                  );
                return (
                  <tr key={m.id}>
                    <td>
                      {m.email} {m.isYou && <span className="badge">you</span>}
                    </td>
                    <td>
                      <span className={m.role === "admin" ? "badge badge-accent" : "badge"}>{m.role}</span>
                    </td>
                    <td>{new Date(m.since).toLocaleDateString()}</td>
                    <td className="cell-actions">
                      <span className="actions">
                        {m.isYou ? (
                          // Demoting yourself locks you out of this page: ask first.
                          <ConfirmButton
                            label={roleLabel}
                            accessibleLabel={`${roleLabel}: ${m.email}`}
                            question="Step down? You lose access to settings."
                            pending={changing}
                            pendingLabel="Saving…"
                            onConfirm={changeRole}
                          />
                        ) : (
                          <button
                            type="button"
                            className="btn btn-small"
                            aria-label={`${roleLabel}: ${m.email}`}
                            disabled={changing}
                            onClick={changeRole}
                          >
                            {changing ? "Saving…" : roleLabel}
                          </button>
                        )}
                        <ConfirmButton
                          label="Remove"
                          accessibleLabel={`Remove ${m.email}`}
                          question={m.isYou ? "Leave this tenant?" : `Remove ${m.email}?`}
                          pending={remove.isPending && remove.variables?.userId === m.id}
                          pendingLabel="Removing…"
                          onConfirm={() =>
                            remove.mutate({ tenantId, userId: m.id }, { onSuccess: () => m.isYou && leave("/") })
                          }
                        />
                      </span>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <AddMemberForm tenantId={tenantId} onAdded={invalidate} />
    </>
  );
}

/** Adds by email; a new account's one-time password is shown once, in a box of its own. */
function AddMemberForm({ tenantId, onAdded }: { tenantId: string; onAdded: () => void }) {
  const trpc = useTRPC();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [added, setAdded] = useState<{ email: string; role: Role; password: string | null } | null>(null);
  const add = useMutation(trpc.members.add.mutationOptions({ onSettled: onAdded }));
  return (
    <>
      {added?.password ? (
        <OneTimeSecret
          label="One-time password"
          title={`Account created for ${added.email}`}
          note={`${added.email} is now ${added.role === "admin" ? "an admin" : "a member"} and signs in with this password. Give it to them over a channel you trust.`}
          value={added.password}
          onDismiss={() => setAdded(null)}
        />
      ) : added ? (
        <p className="alert alert-ok" role="status">
          {added.email} added as {added.role === "admin" ? "an admin" : "a member"}.
        </p>
      ) : null}
      <ChangeError what="add the member" error={add.error} />
      <form
        className="form-row"
        aria-label="Add a member"
        onSubmit={(event) => {
          event.preventDefault();
          setAdded(null);
          add.mutate(
            { tenantId, email, role },
            {
              onSuccess: (result) => {
                setAdded({ email: result.email, role: result.role, password: result.oneTimePassword });
                // Kept only in `added`, not also in the mutation's cache.
                add.reset();
                setEmail("");
                setRole("member");
              },
            },
          );
        }}
      >
        <label>
          Email
          <input
            className="input"
            name="email"
            type="email"
            required
            maxLength={254}
            autoComplete="off"
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        </label>
        <label>
          Role
          <select className="select" name="role" value={role} onChange={(event) => setRole(event.target.value as Role)}>
            <option value="member">Member</option>
            <option value="admin">Admin</option>
          </select>
        </label>
        <button className="btn btn-primary" type="submit" disabled={add.isPending}>
          {add.isPending ? "Adding…" : "Add member"}
        </button>
      </form>
      <p className="muted form-hint">Someone without an account gets one, with a one-time password you pass on to them.</p>
    </>
  );
}
