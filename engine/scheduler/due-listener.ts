// LISTEN bulkhead_due on one backend: a notice that work became due now (a trigger on
// task_instances sends it, migration 20261203110000_due_notifications) wakes the scheduler at
// once rather than at its next tick. Its own connection, outside the pool (a listening session
// must stay open); lost, it is opened again after a second. Notices sent while it was away are
// gone, so every (re)connect wakes the scheduler once: a notice is only ever a hint.
import pg from "pg";
import type { Logger } from "../logger.ts";

export const DUE_CHANNEL = "bulkhead_due";
const RECONNECT_MS = 1_000;

export class DueListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly connectionString: string,
    private readonly onDue: () => void,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.connectionString, application_name: "bulkhead-due-listener" });
    client.on("notification", () => this.onDue());
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, null));
    try {
      await client.connect();
      await client.query(`LISTEN ${DUE_CHANNEL}`);
      if (this.stopped) return void client.end().catch(() => {});
      this.client = client;
      this.onDue();
    } catch (error) {
      this.lost(client, error);
    }
  }

  private lost(client: pg.Client, error: unknown): void {
    if (this.stopped || (this.client !== null && this.client !== client)) return;
    this.client = null;
    client.removeAllListeners();
    client.on("error", () => {});
    void client.end().catch(() => {});
    if (error) this.log.warn({ err: error }, "due listener: connection lost, listening again shortly");
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.connect(), RECONNECT_MS);
    this.retry.unref();
  }
}
