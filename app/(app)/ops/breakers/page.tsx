import type { Metadata } from "next";
import { AllBreakers } from "./all-breakers";

export const metadata: Metadata = { title: "Circuit breakers · Operator console" };

export default function OpsBreakersPage() {
  return (
    <main className="page">
      <div className="page-header">
        <h1>Circuit breakers</h1>
        <p>Every tenant&apos;s open breakers, on whichever backend the tenant is placed. A reset reaches the engines within seconds.</p>
      </div>
      <AllBreakers />
    </main>
  );
}
