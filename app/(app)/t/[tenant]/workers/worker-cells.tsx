import { Time } from "../instances/instance-ui";

/** A comma list of names in code, or "any" for none (a worker polling every queue). */
function Names({ names, none }: { names: readonly string[]; none?: string }) {
  if (names.length === 0 && none) return <span className="muted">{none}</span>;
  return <>{names.map((name, i) => <span key={name}>{i > 0 && ", "}<code>{name}</code></span>)}</>;
}

/** The cells a worker's row has on the tenant's Workers page and the operator's fleet view alike. */
export function WorkerCells({ worker, aliveWithinSecs }: {
  worker: { workerId: string; handlers: readonly string[]; queues: readonly string[]; version: string | null; lastSeenAt: string; alive: boolean };
  aliveWithinSecs: number;
}) {
  return (
    <>
      <td><code>{worker.workerId}</code></td>
      <td><Names names={worker.handlers} /></td>
      <td><Names names={worker.queues} none="any" /></td>
      <td>{worker.version ?? <span className="muted">—</span>}</td>
      <td><Time iso={worker.lastSeenAt} /></td>
      <td>
        <span className={worker.alive ? "badge badge-ok" : "badge"} title={`polled within the last ${aliveWithinSecs} s`}>
          {worker.alive ? "alive" : "not seen lately"}
        </span>
      </td>
    </>
  );
}
