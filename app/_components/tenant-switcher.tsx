"use client";

import { useParams, useRouter } from "next/navigation";

interface TenantOption {
  id: string;
  name: string;
  role: string;
}

export function TenantSwitcher({ tenants }: { tenants: TenantOption[] }) {
  const router = useRouter();
  const current = useParams<{ tenant?: string }>().tenant ?? "";
  if (tenants.length === 0) return null;
  return (
    <>
      <label className="visually-hidden" htmlFor="tenant-switcher">
        Tenant
      </label>
      <select
        id="tenant-switcher"
        className="select"
        value={current}
        onChange={(event) => router.push(`/t/${event.target.value}`)}
      >
        {!current && (
          <option value="" disabled>
            Choose a tenant…
          </option>
        )}
        {tenants.map((tenant) => (
          <option key={tenant.id} value={tenant.id}>
            {tenant.name} ({tenant.role})
          </option>
        ))}
      </select>
    </>
  );
}
