"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { ChangeError } from "../../../../_components/confirm-button";
import { useTRPC } from "../../../../_components/trpc";
import { OneTimeSecret } from "../../../t/[tenant]/settings/one-time-secret";

interface Created {
  tenantId: string;
  name: string;
  backendId: string;
  adminEmail: string;
  /** Only when the admin's account was made here: shown once, kept only in this state. */
  oneTimePassword: string | null;
}

/**
 * A new tenant, placed on the chosen backend (the platform default when none is chosen), with
 * its first admin: an existing account by email, or a new one whose one-time password is shown
 * once.
 */
export function CreateTenantCard() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const backends = useQuery(trpc.ops.backends.queryOptions());
  const [slug, setSlug] = useState("");
  const [name, setName] = useState("");
  const [backend, setBackend] = useState("");
  const [adminEmail, setAdminEmail] = useState("");
  const [created, setCreated] = useState<Created | null>(null);
  const create = useMutation(
    trpc.ops.createTenant.mutationOptions({
      onSettled: () => Promise.all([
        queryClient.invalidateQueries(trpc.ops.tenantPage.pathFilter()),
        queryClient.invalidateQueries(trpc.ops.audit.pathFilter()),
      ]),
    }),
  );

  const placed = created && (
    <>
      {created.name !== created.tenantId && <>{created.name} (</>}
      <Link prefetch={false} href={`/ops/tenants/${created.tenantId}`}><code>{created.tenantId}</code></Link>
      {created.name !== created.tenantId && <>)</>} is on <code>{created.backendId}</code>
    </>
  );

  return (
    <section className="card" aria-labelledby="create-tenant-heading">
      <h2 id="create-tenant-heading">Create a tenant</h2>
      <p className="muted">
        The tenant is placed on the chosen backend at epoch 1. Its first admin is an existing account, or a new one with a
        one-time password you pass on to them.
      </p>
      {created?.oneTimePassword ? (
        <>
          <p className="alert alert-ok" role="status">Tenant created: {placed}.</p>
          <OneTimeSecret
            label="One-time password"
            title={`Account created for ${created.adminEmail}`}
            note={`${created.adminEmail} is the first admin of ${created.tenantId} and signs in with this password. Give it to them over a channel you trust.`}
            value={created.oneTimePassword}
            onDismiss={() => setCreated({ ...created, oneTimePassword: null })}
          />
        </>
      ) : created ? (
        <p className="alert alert-ok" role="status">
          Tenant created: {placed}, with {created.adminEmail} as its admin.
        </p>
      ) : null}
      <ChangeError what="create the tenant" error={create.error} />
      <form
        className="form-row"
        aria-label="Create a tenant"
        onSubmit={(event) => {
          event.preventDefault();
          setCreated(null);
          create.mutate(
            { slug, name: name.trim() || undefined, backendId: backend || undefined, adminEmail },
            {
              onSuccess: (result) => {
                setCreated(result);
                // The password is kept only in `created`, not also in the mutation's cache.
                create.reset();
                setSlug("");
                setName("");
                setAdminEmail("");
              },
            },
          );
        }}
      >
        <label>
          Slug
          <input
            className="input"
            name="slug"
            required
            maxLength={63}
            pattern="[a-z0-9][a-z0-9\-]{1,62}"
            title="2-63 lowercase letters, digits or '-', starting with a letter or digit, e.g. acme-eu"
            autoComplete="off"
            spellCheck={false}
            value={slug}
            onChange={(event) => setSlug(event.target.value)}
          />
        </label>
        <label>
          Name
          <input
            className="input"
            name="name"
            maxLength={200}
            placeholder="the slug"
            autoComplete="off"
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        </label>
        <label>
          Backend
          <select className="input" name="backend" value={backend} onChange={(event) => setBackend(event.target.value)}>
            <option value="">Platform default</option>
            {backends.data?.map((b) => (
              <option key={b.id} value={b.id}>{b.reachable ? b.id : `${b.id} (unreachable)`}</option>
            ))}
          </select>
        </label>
        <label>
          First admin email
          <input
            className="input"
            name="adminEmail"
            type="email"
            required
            maxLength={254}
            autoComplete="off"
            value={adminEmail}
            onChange={(event) => setAdminEmail(event.target.value)}
          />
        </label>
        <button className="btn btn-primary" type="submit" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create tenant"}
        </button>
      </form>
      {backends.error && <p className="field-error">Could not load the backends ({backends.error.message}): the tenant goes to the platform default.</p>}
    </section>
  );
}
