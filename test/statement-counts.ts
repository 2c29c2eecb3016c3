// Counts the statements a pool's connections run, by name (unnamed ones as "unnamed"): for tests
// that check how often something reads the database, not only what it reads.
import type pg from "pg";

export function countStatements(pool: pg.Pool): Map<string, number> {
  const counts = new Map<string, number>();
  pool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
      const config = args[0] as { name?: string } | string | undefined;
      const name = typeof config === "object" && config?.name ? config.name : "unnamed";
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return query(...args);
    };
  });
  return counts;
}
