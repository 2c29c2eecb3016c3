import { reasonCount, type Reason } from "./fairness-data";
import styles from "./fairness.module.css";

/** The ledger's reasons a tenant waited, the dominant `shown` with their counts (the full ledger words on hover). */
export function ReasonList({ reasons, shown = 2 }: { reasons: readonly Reason[]; shown?: number }) {
  if (reasons.length === 0) return <span className="muted">none recorded</span>;
  return (
    <ul className={styles.reasons}>
      {reasons.slice(0, shown).map((r) => (
        <li key={r.key} title={r.resource}>
          <strong>{r.label}</strong>: {reasonCount(r)}
        </li>
      ))}
      {reasons.length > shown && <li className="muted">+{reasons.length - shown} more</li>}
    </ul>
  );
}
