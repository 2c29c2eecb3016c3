// One transaction on one pooled connection, for the few writes that must read a row under its
// lock before deciding what to write (signals, API state changes).
import type pg from "pg";

/** Anything statements can be sent to: a pool, or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query">;
export type Connectable = Pick<pg.Pool, "connect">;

/** Runs `work` inside BEGIN … COMMIT; any error rolls back and is rethrown. */
export async function inTransaction<T>(pool: Connectable, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection whose ROLLBACK failed is in an unknown state: destroyed, never reused.
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
