import { colorOf, type Series } from "./fairness-data";
import styles from "./fairness.module.css";

/** The charts' series as an HTML list above the chart: long tenant names wrap here instead of covering the plot. */
export function SeriesLegend({ series }: { series: readonly Series[] }) {
  return (
    <ul className={styles.legend} aria-label="Series">
      {series.map((s, i) => (
        <li key={s.key}><span className={styles.swatch} style={{ background: colorOf(s, i) }} />{s.name}</li>
      ))}
    </ul>
  );
}
