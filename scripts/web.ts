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
server.listen(port, () => console.log(`[bulkhead] web listening on port ${port}`));

function stop() {
  server.close();
  void app.close().finally(() => process.exit(0));
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
