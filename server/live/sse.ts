// The Server-Sent Events plumbing both live streams share: one response whose body a poll loop
// writes to, a keep-alive comment every 15 s, and one end, whichever side ends it (the client
// going away aborts `signal`), at which the caller's slot is released exactly once.
const KEEP_ALIVE_MS = 15_000;

/** One SSE event, `data` as a single JSON line. */
export function sseEvent(name: string, data: unknown, id?: string): string {
  return `${id ? `id: ${id}\n` : ""}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface SseChannel {
  send(text: string): void;
  close(): void;
  /** Runs `work` after `ms` unless the stream has ended by then. */
  later(ms: number, work: () => void): void;
  readonly closed: boolean;
}

export function sseResponse(options: { signal: AbortSignal; release: () => void }, start: (channel: SseChannel) => void): Response {
  const encoder = new TextEncoder();
  let timer: NodeJS.Timeout | undefined;
  let keepAlive: NodeJS.Timeout | undefined;
  let closed = false;
  const end = () => {
    closed = true;
    clearTimeout(timer);
    clearInterval(keepAlive);
    options.signal.removeEventListener("abort", onAbort);
    options.release();
  };
  let onAbort = () => {};

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const channel: SseChannel = {
        send(text) {
          if (!closed) controller.enqueue(encoder.encode(text));
        },
        close() {
          if (closed) return;
          end();
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        },
        later(ms, work) {
          if (!closed) timer = setTimeout(work, ms);
        },
        get closed() {
          return closed;
        },
      };
      onAbort = () => channel.close();
      options.signal.addEventListener("abort", onAbort, { once: true });
      if (options.signal.aborted) return channel.close();
      // A first comment at once: the response (and EventSource's `open`) goes out with it, not
      // with the first event, which may be long in coming.
      channel.send(": open\n\n");
      keepAlive = setInterval(() => channel.send(": keep-alive\n\n"), KEEP_ALIVE_MS);
      start(channel);
    },
    cancel() {
      if (!closed) end();
    },
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" },
  });
}
