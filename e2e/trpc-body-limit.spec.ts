// The tRPC endpoint's 1 MiB body cap on the real web server: a 20 MiB body is answered 413 in
// tRPC's error shape without being read, a chunked one is cut off, and a small call still works.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import { E2E_PORT } from "./env.ts";
import { signIn } from "./fixtures.ts";

const MiB = 1024 * 1024;

const tooLarge = {
  error: {
    message: "request body exceeds the tRPC limit of 1048576 bytes (1 MiB)",
    code: -32013,
    data: { code: "PAYLOAD_TOO_LARGE", httpStatus: 413, path: "sequences.create", inputPath: null },
  },
};

/** POSTs `total` bytes in 64 KiB chunks without a Content-Length (chunked transfer encoding). */
function postChunked(path: string, total: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port: E2E_PORT, path, method: "POST", headers: { "content-type": "application/json" } });
    request.on("response", (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    // The server may stop reading (and close) once it has answered: that is the point.
    request.on("error", (error: NodeJS.ErrnoException) => (error.code === "ECONNRESET" || error.code === "EPIPE" ? undefined : reject(error)));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const write = () => {
      while (sent < total) {
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once("drain", write);
      }
      request.end();
    };
    write();
  });
}

test("tRPC refuses bodies over 1 MiB before reading them, and serves small calls", async ({ page }) => {
  await signIn(page, "member@acme.test");

  const started = Date.now();
  const big = await page.request.post("/api/trpc/sequences.create", {
    headers: { "content-type": "application/json" },
    data: Buffer.alloc(20 * MiB, 0x20),
  });
  const elapsed = Date.now() - started;
  expect(big.status()).toBe(413);
  expect(await big.json()).toEqual(tooLarge);
  console.info(`20 MiB body: 413 after ${elapsed} ms`);

  const chunked = await postChunked("/api/trpc/sequences.create", 2 * MiB);
  expect(chunked.status).toBe(413);
  expect(JSON.parse(chunked.body)).toEqual(tooLarge);

  const sequence = {
    id: randomUUID(),
    tenant_id: "acme",
    namespace: "default",
    name: `body-limit-${randomUUID().slice(0, 8)}`,
    version: 1,
    blocks: [{ type: "step", id: "a", handler: "noop" }],
    created_at: new Date().toISOString(),
  };
  const small = await page.request.post("/api/trpc/sequences.create", { data: { tenantId: "acme", sequence } });
  expect(small.status()).toBe(200);
  expect(await small.json()).toMatchObject({ result: { data: { id: sequence.id, warnings: [] } } });
});
