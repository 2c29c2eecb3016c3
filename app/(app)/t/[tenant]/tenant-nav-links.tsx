"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

// The tabs themselves: a client component only to mark the current page. They do not prefetch
// (see app/(app)/layout.tsx): eleven tabs would render eleven pages on every load.
export function TenantNavLinks({ links }: { links: readonly { href: string; label: string }[] }) {
  const pathname = usePathname();
  // A section's tab stays current on its sub-pages (an instance under Instances); the overview
  // (/t/<tenant>) is current on itself only, since every page sits under it.
  const isCurrent = (href: string) => pathname === href || (href.split("/").length > 3 && pathname.startsWith(`${href}/`));
  return (
    <nav className="nav page-nav" aria-label="Tenant pages">
      {links.map((link) => (
        <Link key={link.href} href={link.href} prefetch={false} aria-current={isCurrent(link.href) ? "page" : undefined}>
          {link.label}
        </Link>
      ))}
    </nav>
  );
}
