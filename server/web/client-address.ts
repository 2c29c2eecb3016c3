// The client's IP address, for the sign-in throttle. The web server (scripts/web.ts) writes the
// socket's address into PEER_ADDRESS_HEADER, over anything a client sent under that name, since
// the App Router cannot see the socket. x-forwarded-for is believed only as far as
// BULKHEAD_TRUSTED_PROXIES says: a hop count (that many proxies of ours stand in front of the web
// server) or a list of addresses and CIDRs (the proxies' own). Unset, the socket's address is the
// client's and x-forwarded-for is ignored, so a client cannot rotate its apparent address.
import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";

export const PEER_ADDRESS_HEADER = "x-bulkhead-peer-address";

export type TrustedProxies = { hops: number } | { networks: BlockList } | null;

/** An IPv4 address mapped into IPv6 (`::ffff:10.0.0.1`, how dual-stack sockets report) as IPv4. */
function plain(address: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;
}

function family(address: string): "ipv4" | "ipv6" | null {
  const version = isIP(address);
  return version === 4 ? "ipv4" : version === 6 ? "ipv6" : null;
}

/** The setting's value: "" (no proxy), a hop count ("1"), or addresses and CIDRs separated by commas. */
export function parseTrustedProxies(value: string): TrustedProxies {
  const text = value.trim();
  if (text === "" || text === "0") return null;
  if (/^\d+$/.test(text)) return { hops: Number(text) };
  const networks = new BlockList();
  for (const entry of text.split(",").map((part) => part.trim()).filter(Boolean)) {
    const [address = "", prefix, ...rest] = entry.split("/");
    const kind = family(plain(address));
    const bits = prefix === undefined ? (kind === "ipv4" ? 32 : 128) : Number(prefix);
    const max = kind === "ipv4" ? 32 : 128;
    if (!kind || rest.length > 0 || !/^\d+$/.test(String(bits)) || bits > max) {
      throw new Error(`BULKHEAD_TRUSTED_PROXIES: "${entry}" is not an address, a CIDR or a hop count`);
    }
    networks.addSubnet(plain(address), bits, kind);
  }
  return { networks };
}

/** Stamps the socket's address on the request, replacing any header of that name the client sent. */
export function recordPeerAddress(req: IncomingMessage): void {
  req.headers[PEER_ADDRESS_HEADER] = req.socket.remoteAddress ?? "";
}

/** The client's address: the socket's, or the x-forwarded-for entry the trusted proxies vouch for. */
export function clientAddress(headers: Headers, trusted: TrustedProxies): string | null {
  const peer = headers.get(PEER_ADDRESS_HEADER);
  if (!peer) return null;
  if (!trusted) return plain(peer);
  // Nearest hop last: each proxy appends the address it was called from.
  const chain = [
    ...(headers.get("x-forwarded-for") ?? "").split(",").map((part) => plain(part.trim())).filter((part) => family(part)),
    plain(peer),
  ];
  if ("hops" in trusted) return chain[Math.max(0, chain.length - 1 - trusted.hops)]!;
  let index = chain.length - 1;
  while (index > 0 && trusted.networks.check(chain[index]!, family(chain[index]!)!)) index--;
  return chain[index]!;
}
