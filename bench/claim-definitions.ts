// Claim definitions: the claim statement (batch 256) over instances of one sequence with a large
// definition (60 http_request steps, about 27 KB), sending every row's definition as it did
// before, against naming the sequence as known to the claimer, as the engine does for the
// sequences it holds parsed (its definition is then left out). Each claim rolled back.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { claimDueInstances } from "../engine/storage/claim.ts";
import { benchCluster, freshBenchDatabase, median } from "./cluster.ts";
import { postgresVersion, writeResults } from "./results.ts";

const CLAIMS = Number(process.env.BENCH_CLAIM_RUNS ?? 30);

export async function main(): Promise<void> {
  const startedAt = performance.now();
  const cluster = await benchCluster();
  try {
    const url = await freshBenchDatabase(cluster, "bench_claim_definitions", true);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const id = randomUUID();
    const blocks = Array.from({ length: 60 }, (_, i) => ({
      type: "step", id: `step_${i}`, handler: "http_request",
      params: { url: `https://vendor.example/api/v1/resource/${i}`, method: "POST", body: { order: "{{ context.data.order }}", line: i, note: "x".repeat(200) } },
    }));
    const definition = JSON.stringify({ id, tenant_id: "acme", namespace: "default", name: "large", version: 1, created_at: new Date().toISOString(), blocks });
    await pool.query("INSERT INTO sequences (id, tenant_id, namespace, name, version, definition, created_at) VALUES ($1, 'acme', 'default', 'large', 1, $2, now())", [id, definition]);
    await pool.query(`INSERT INTO task_instances (id, tenant_id, namespace, sequence_id, state, context, next_fire_at)
                      SELECT gen_random_uuid(), 'acme', 'default', $1, 'scheduled', '{}', now() - interval '1 second' FROM generate_series(1, 2000)`, [id]);
    const claimMs = async (knownSequences: string[]) => {
      const client = await pool.connect();
      const ms: number[] = [];
      try {
        for (let i = 0; i < CLAIMS; i++) {
          await client.query("BEGIN");
          const started = performance.now();
          await claimDueInstances(client, { now: new Date(), limit: 256, maxPerTenant: 0, leaseOwner: "bench", leaseMs: 30_000, knownSequences });
          ms.push(performance.now() - started);
          await client.query("ROLLBACK");
        }
      } finally {
        client.release();
      }
      return median(ms);
    };
    await claimMs([]); // warm up
    const sent = await claimMs([]);
    const known = await claimMs([`acme ${id}`]);
    console.log(`claim of 256 with a ${definition.length.toLocaleString("en-US")}-byte definition: sent ${sent.toFixed(1)} ms, known ${known.toFixed(1)} ms (median of ${CLAIMS}); ${(sent / known).toFixed(1)}x`);
    writeResults({
      bench: "claim-definitions",
      summary: `The claim statement, batch 256, over instances of one sequence whose definition is ${definition.length.toLocaleString("en-US")} bytes: each row's definition sent, against the sequence named as known to the claimer (as the engine names those it holds parsed); ${CLAIMS} claims each, rolled back.`,
      tables: [{ columns: ["definitions", "claim median (ms)"], rows: [["sent with every row", sent.toFixed(1)], ["left out (known)", known.toFixed(1)], ["ratio", `${(sent / known).toFixed(1)}x`]] }],
      notes: ["Round trip of `claimDueInstances` from the benchmark's process, its rows parsed by pg, as the scheduler waits for it."],
      postgres: await postgresVersion(url),
      startedAt,
    });
    await pool.end();
  } finally {
    await cluster.stop();
  }
}
