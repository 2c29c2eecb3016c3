// The web server `npm start` runs: Next.js's own request handler behind a node:http server that
// stamps each request with its socket's address (server/web/client-address.ts), which the App
// Router cannot see, so the sign-in throttle counts the real client and not x-forwarded-for.
import http from "node:http";
import path from "node:path";
import next from "next";
import { parseTrustedProxies, recordPeerAddress } from "../server/web/client-address.ts";

const port = Number(process.env.PORT ?? 3000);
try {
  parseTrustedProxies(process.env.BULKHEAD_TRUSTED_PROXIES ?? "");
} catch (error) {
  console.error(`[bulkhead] error: ${(error as Error).message}`);
  process.exit(1);
}

const app = next({ dev: false, dir: path.resolve(import.meta.dirname, ".."), port });
await app.prepare();
const handle = app.getRequestHandler();
const server = http.createServer((req, res) => {
  recordPeerAddress(req);
  void handle(req, res);
});
// Node closes an idle kept-alive socket after 5 s; a client that reuses it at that moment gets
// ECONNRESET (seen from Playwright's request context). Idle sockets stay open longer than any
// client or load balancer keeps them unused (60 s is the common default), so the server is never
// the side that closes first.
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.listen(port, () => console.log(`[bulkhead] web listening on port ${port}`));

function stop() {
  server.close();
  void app.close().finally(() => process.exit(0));
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
