// The stream's own mechanics with a source that fails (wire-format S: storage errors back off
// without closing the stream); the source's SQL is tested against PostgreSQL in
// server/rest/streams.int.test.ts.
import { expect, it } from "vitest";
import { createLogger } from "../../engine/logger.ts";
import { instanceStreamResponse, type LiveSource } from "./instance-stream.ts";

it("keeps the stream open through storage errors, backing off, and ends it once the instance is done", async () => {
  const calls: number[] = [];
  let failures = 2;
  const source: LiveSource = {
    async pollLive() {
      calls.push(performance.now());
      if (failures-- > 0) throw new Error("connection refused");
      return { state: "completed", updatedAt: new Date(), outputs: [] };
    },
  };
  let released = 0;
  const response = instanceStreamResponse(source, "00000000-0000-4000-8000-000000000000", {
    pollMs: 100, signal: new AbortController().signal, release: () => released++, log: createLogger("test", "silent"),
  });
  const text = await response.text();
  expect(text).toBe(
    ": open\n\n" +
    'event: state\ndata: {"instance_id":"00000000-0000-4000-8000-000000000000","state":"completed"}\n\n' +
    'event: done\ndata: {"state":"completed"}\n\n',
  );
  expect(calls).toHaveLength(3);
  // Doubling from poll_ms: 200 ms after the first failure, 400 after the second.
  expect(calls[1]! - calls[0]!).toBeGreaterThanOrEqual(190);
  expect(calls[2]! - calls[1]!).toBeGreaterThanOrEqual(390);
  expect(released).toBe(1);
});
