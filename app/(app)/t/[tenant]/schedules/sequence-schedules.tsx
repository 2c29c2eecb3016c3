"use client";

import { SchedulesPanel } from "./schedules-panel";

/** A sequence's page: the schedules that start this version, and a form to add one. */
export function SequenceSchedules({ tenantId, sequenceId }: { tenantId: string; sequenceId: string }) {
  return (
    <section aria-labelledby="sequence-schedules-heading">
      <h2 id="sequence-schedules-heading">Schedules</h2>
      <SchedulesPanel tenantId={tenantId} sequenceId={sequenceId} />
    </section>
  );
}
