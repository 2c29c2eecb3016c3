"use client";

// Retry (a failed instance runs again from its first unfinished top-level block) and "retry from
// this step" (resume-from, wire-format J: that top-level block and every later one run again).
// Both are for the tenant's admins; the procedures check the role again and write the audit entry.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ConfirmButton } from "../../../../../_components/confirm-button";
import { useTRPC } from "../../../../../_components/trpc";

/** After either, the page reads the instance again: it is scheduled now, and its polling resumes. */
function useRefreshInstances() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries(trpc.instances.pathFilter());
}

export function RetryInstanceButton({ tenantId, instanceId }: { tenantId: string; instanceId: string }) {
  const trpc = useTRPC();
  const refresh = useRefreshInstances();
  const retry = useMutation(trpc.instances.retry.mutationOptions({ onSettled: refresh }));
  return (
    <div className="retry-action">
      <ConfirmButton
        label="Retry"
        accessibleLabel="Retry instance"
        question="Run it again from its first unfinished top-level block? Completed blocks keep their outputs."
        confirmLabel="Retry"
        cancelLabel="Not now"
        pending={retry.isPending}
        pendingLabel="Retrying…"
        onConfirm={() => retry.mutate({ tenantId, instanceId })}
      />
      {retry.error && (
        <div className="alert alert-error" role="alert">
          Could not retry: {retry.error.message}
        </div>
      )}
      {retry.isSuccess && <p className="status-line" role="status">Retried: the instance is scheduled to run now.</p>}
    </div>
  );
}

export function RetryFromStepButton({ tenantId, instanceId, blockId }: { tenantId: string; instanceId: string; blockId: string }) {
  const trpc = useTRPC();
  const refresh = useRefreshInstances();
  const resume = useMutation(trpc.instances.resumeFrom.mutationOptions({ onSettled: refresh }));
  return (
    <div className="retry-action">
      <ConfirmButton
        label="Retry from this step"
        accessibleLabel={`Retry from step ${blockId}`}
        question={`Run ${blockId} and every top-level block after it again? Their outputs are deleted; earlier blocks keep theirs.`}
        confirmLabel="Retry from here"
        cancelLabel="Not now"
        pending={resume.isPending}
        pendingLabel="Retrying…"
        onConfirm={() => resume.mutate({ tenantId, instanceId, blockId })}
      />
      {resume.error && (
        <div className="alert alert-error" role="alert">
          Could not retry from {blockId}: {resume.error.message}
        </div>
      )}
      {resume.isSuccess && (
        <p className="status-line" role="status">
          Retrying from {blockId}: {resume.data.outputsDeleted} outputs deleted, the instance is scheduled to run now.
        </p>
      )}
    </div>
  );
}
