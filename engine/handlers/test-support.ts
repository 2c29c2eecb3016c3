// Helpers for the handler tests: a HandlerInput factory and a local HTTP server that counts the
// connections it accepts (so a test can prove a refused request never connected).
import http from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import type { HandlerInput, TenantInstances } from "./types.ts";

export const silentLogger = pino({ level: "silent" });

/** A tenant with no other instances: lookups find nothing, signals and events are refused; log lines go nowhere. */
export const noInstances: TenantInstances = {
  getInstance: async () => null,
  signalInstance: async () => {
    throw new Error("no instances in a handler unit test");
  },
  emitEvent: async () => null,
  appendLog: async () => {},
};

export function makeInput(params: unknown, overrides: Partial<HandlerInput> = {}): HandlerInput {
  return {
    tenantId: "tenant-a",
    instanceId: "instance-1",
    blockId: "step-1",
    attempt: 0,
    params,
    context: { data: null, config: null },
    signal: new AbortController().signal,
    log: silentLogger,
    instances: noInstances,
    blocks: [],
    ...overrides,
  };
}

export interface TestServer {
  port: number;
  /** `host:port` as it would be allow-listed. */
  hostPort: string;
  url(path?: string): string;
  connections(): number;
  close(): Promise<void>;
}

export async function startServer(listener: http.RequestListener): Promise<TestServer> {
  const server = http.createServer(listener);
  let connections = 0;
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    hostPort: `127.0.0.1:${port}`,
    url: (path = "/") => `http://127.0.0.1:${port}${path}`,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Reads a request body as text. */
export async function readRequestBody(request: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
