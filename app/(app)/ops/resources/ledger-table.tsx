import { Fragment } from "react";
import type { LedgerEntry } from "../../../../engine/resources/ledger.ts";

const BOUNDARY_BADGE: Record<LedgerEntry["boundary"], string> = {
  tiered: "badge badge-accent",
  "per tenant": "badge badge-ok",
  global: "badge",
};

/** A setting or a path that may break after a `/`, `_` or `,` (or before a `(`), never inside a word. */
function Breakable({ text, title }: { text: string; title?: string }) {
  const parts = text.split(/(?<=[/_,])|(?=\()/);
  return (
    <code title={title}>
      {parts.map((part, i) => <Fragment key={i}>{i > 0 && <wbr />}{part}</Fragment>)}
    </code>
  );
}

/** The ledger, one row per resource; a boundary not enforced yet says so. */
export function LedgerTable({ entries }: { entries: readonly LedgerEntry[] }) {
  const missing = entries.filter((e) => !e.enforced).length;
  return (
    <>
      {missing > 0 && (
        <p>
          <span className="badge badge-warn">{missing} not yet enforced</span>{" "}
          <span className="muted">Decided, but until it is enforced the resource is shared without a bound.</span>
        </p>
      )}
      <div className="table-wrap">
        <table className="table resources-ledger" aria-label="Resource ledger">
          <thead>
            <tr>
              <th scope="col">Resource</th>
              <th scope="col">Boundary</th>
              <th scope="col">Default</th>
              <th scope="col">Setting</th>
              <th scope="col">Per-tenant value</th>
              <th scope="col">Enforced at</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id} data-enforced={e.enforced}>
                <th scope="row">{e.resource}</th>
                <td><span className={BOUNDARY_BADGE[e.boundary]}>{e.boundary}</span></td>
                <td>{e.default}</td>
                <td>{e.setting ? <Breakable text={e.setting} /> : <span className="muted">—</span>}</td>
                <td>{e.override ?? <span className="muted">—</span>}</td>
                <td>
                  {!e.enforced && <><span className="badge badge-warn">not yet enforced</span>{" "}</>}
                  <Breakable text={e.enforcedAt} title={e.enforced ? undefined : "where it is to be enforced"} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
