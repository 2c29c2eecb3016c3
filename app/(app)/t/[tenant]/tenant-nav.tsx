"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

// The tenant's pages, under its header.
export function TenantNav({ tenantId }: { tenantId: string }) {
  const pathname = usePathname();
  const links = [
    { href: `/t/${tenantId}`, label: "Overview" },
    { href: `/t/${tenantId}/breakers`, label: "Breakers" },
  ];
  return (
    <nav className="nav page-nav" aria-label="Tenant pages">
      {links.map((link) => (
        <Link key={link.href} href={link.href} aria-current={pathname === link.href ? "page" : undefined}>
          {link.label}
        </Link>
      ))}
    </nav>
  );
}
