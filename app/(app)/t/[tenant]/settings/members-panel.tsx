"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { QueryError } from "../../../../_components/query-error";
import { useTRPC } from "../../../../_components/trpc";
import { ChangeError, ConfirmButton } from "../../../../_components/confirm-button";
import { OneTimeSecret } from "./one-time-secret";
import { LocalTime, localTime, utcTime } from "../../../../_components/local-time";

type Role = "member" | "admin";

export function MembersPanel({ tenantId }: { tenantId: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const members = useQuery(trpc.members.list.queryOptions({ tenantId }));
  const invitations = useQuery(trpc.members.invitations.queryOptions({ tenantId }));
  const invalidate = () => queryClient.invalidateQueries(trpc.members.pathFilter());
  const setRole = useMutation(trpc.members.setRole.mutationOptions({ onSettled: invalidate }));
  const remove = useMutation(trpc.members.remove.mutationOptions({ onSettled: invalidate }));
  const revoke = useMutation(trpc.members.revokeInvitation.mutationOptions({ onSettled: invalidate }));

  // After stepping down or leaving, this page is no longer yours: go where you still have access,
  // and refresh so the tabs and tenant switcher follow.
  const leave = (href: string) => {
    router.push(href);
    router.refresh();
  };

  if (members.error) return <QueryError error={members.error} />;
  if (invitations.error) return <QueryError error={invitations.error} />;
  if (!members.data || !invitations.data) return <div className="skeleton" aria-busy="true" aria-label="Loading members" />;
  return (
    <>
      <ChangeError what="change the role" error={setRole.error} />
      <ChangeError what="remove the member" error={remove.error} />
      <ChangeError what="revoke the invitation" error={revoke.error} />
      {members.data.length === 0 && invitations.data.length === 0 ? (
        <p className="empty">No members yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Members">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
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
                    <td>joined <LocalTime iso={m.since} shown="date" /></td>
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
              {/* Pending invitations: not members until accepted, so only Revoke. */}
              {invitations.data.map((i) => (
                <tr key={i.id}>
                  <td>{i.email}</td>
                  <td>
                    <span className={i.role === "admin" ? "badge badge-accent" : "badge"}>{i.role}</span>
                  </td>
                  <td>
                    <span className="badge badge-warn">invited</span>{" "}
                    <span title={utcTime(i.expiresAt)}>expires <LocalTime iso={i.expiresAt} shown="date" /></span>
                  </td>
                  <td className="cell-actions">
                    <ConfirmButton
                      label="Revoke"
                      accessibleLabel={`Revoke the invitation of ${i.email}`}
                      question="Revoke? The link stops working."
                      pending={revoke.isPending && revoke.variables?.id === i.id}
                      pendingLabel="Revoking…"
                      onConfirm={() => revoke.mutate({ tenantId, id: i.id })}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <InviteForm tenantId={tenantId} onInvited={invalidate} />
    </>
  );
}

const article = (role: Role) => (role === "admin" ? "an admin" : "a member");

/**
 * Invites by email. The answer is the same whether or not the address has an account, so this
 * shows the same thing for both: the link, once, in a box of its own, to pass on to the invitee.
 */
function InviteForm({ tenantId, onInvited }: { tenantId: string; onInvited: () => void }) {
  const trpc = useTRPC();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [invited, setInvited] = useState<{ email: string; role: Role; expiresAt: string; link: string } | null>(null);
  const invite = useMutation(trpc.members.invite.mutationOptions({ onSettled: onInvited }));
  return (
    <>
      {invited && (
        <OneTimeSecret
          label="Invitation link"
          title={`Invitation for ${invited.email}`}
          note={`Send this link to ${invited.email} yourself (Bulkhead sends no email). It works once, until ${localTime(invited.expiresAt, "date")}: they sign in with that address, or choose a password for a new account, and join as ${article(invited.role)}. Treat it like a password until it is used.`}
          value={invited.link}
          onDismiss={() => setInvited(null)}
        />
      )}
      <ChangeError what="invite" error={invite.error} />
      <form
        className="form-row"
        aria-label="Invite a member"
        onSubmit={(event) => {
          event.preventDefault();
          setInvited(null);
          invite.mutate(
            { tenantId, email, role },
            {
              onSuccess: (result) => {
                // The page's own origin: the link is a path, so it points at whichever address the admin uses.
                setInvited({ ...result, link: new URL(result.link, window.location.origin).toString() });
                // Kept only in `invited`, not also in the mutation's cache.
                invite.reset();
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
        <button className="btn btn-primary" type="submit" disabled={invite.isPending}>
          {invite.isPending ? "Inviting…" : "Invite"}
        </button>
      </form>
      <p className="muted form-hint">
        People join only by accepting an invitation: its link works once, for 7 days. Inviting an address again replaces its link.
      </p>
    </>
  );
}
