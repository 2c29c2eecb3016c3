import type { Metadata } from "next";
import { FleetWorkers } from "./fleet-workers";

export const metadata: Metadata = { title: "Workers · Operator console" };

export default function OpsWorkersPage() {
  return (
    <main className="page">
      <div className="page-header">
        <h1>Workers</h1>
        <p>
          Every external worker, most recently seen first: the fleet&apos;s (operator keys polling for no tenant, across every
          tenant) and each tenant&apos;s own, read from the backend the tenant is placed on.
        </p>
      </div>
      <FleetWorkers />
    </main>
  );
}
