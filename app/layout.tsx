import type { Metadata } from "next";
import type { ReactNode } from "react";
import { Providers } from "./_components/providers";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Bulkhead", template: "%s · Bulkhead" },
  description: "Durable multi-tenant workflows with blast-radius containment",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
