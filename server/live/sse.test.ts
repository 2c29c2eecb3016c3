// The SSE plumbing both live streams share: the opening comment, the keep-alive every 15 s
// (S), and one release of the caller's slot however the stream ends.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { sseResponse } from "./sse.ts";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

async function readChunk(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const chunk = await reader.read();
  return chunk.done ? "<end>" : new TextDecoder().decode(chunk.value);
}

it("opens with a comment, sends a keep-alive every 15 s while nothing happens, and releases once when the client goes away", async () => {
  const abort = new AbortController();
  let released = 0;
  const response = sseResponse({ signal: abort.signal, release: () => released++ }, () => {});
  const reader = response.body!.getReader();
  expect(await readChunk(reader)).toBe(": open\n\n");
  await vi.advanceTimersByTimeAsync(14_999);
  const next = readChunk(reader);
  await vi.advanceTimersByTimeAsync(1);
  expect(await next).toBe(": keep-alive\n\n");
  await vi.advanceTimersByTimeAsync(15_000);
  expect(await readChunk(reader)).toBe(": keep-alive\n\n");
  abort.abort();
  expect(await readChunk(reader)).toBe("<end>");
  abort.abort();
  expect(released).toBe(1);
});

it("releases once when the stream closes itself, and sends nothing after", async () => {
  let released = 0;
  const response = sseResponse({ signal: new AbortController().signal, release: () => released++ }, (channel) => {
    channel.send("event: done\ndata: {}\n\n");
    channel.close();
    channel.send("event: late\ndata: {}\n\n");
    channel.close();
  });
  expect(await response.text()).toBe(": open\n\nevent: done\ndata: {}\n\n");
  expect(released).toBe(1);
});
