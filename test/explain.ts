// EXPLAIN ANALYZE of one statement, rolled back (a claim it runs changes nothing), with the plan's
// nodes flattened: for tests and benchmarks that check which indexes a statement reads and how much.
import type pg from "pg";

export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  Plans?: PlanNode[];
}

export interface Explained {
  /** Every node of the plan, depth first. */
  nodes: PlanNode[];
  executionMs: number;
}

export async function explainAnalyze(pool: Pick<pg.Pool, "connect">, text: string, values: unknown[]): Promise<Explained> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const { rows } = await client.query<{ "QUERY PLAN": { Plan: PlanNode; "Execution Time": number }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
    const plan = rows[0]!["QUERY PLAN"][0]!;
    return { nodes: flatten(plan.Plan), executionMs: plan["Execution Time"] };
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}

/** The plan's scans of `relation`. */
export const scansOf = (explained: Explained, relation: string) =>
  explained.nodes.filter((node) => node["Relation Name"] === relation && node["Node Type"].endsWith("Scan"));

/** Rows the scans produced, over all their loops. */
export const rowsRead = (scans: PlanNode[]) => scans.reduce((sum, scan) => sum + (scan["Actual Rows"] ?? 0) * (scan["Actual Loops"] ?? 1), 0);

const flatten = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(flatten)];
