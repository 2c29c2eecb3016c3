// The SSRF guard of outbound HTTP (http_request, llm_call): a step may not reach loopback,
// private, link-local or otherwise internal addresses unless its host is allow-listed
// (BULKHEAD_HTTP_ALLOW). The host is resolved once, every address is checked, and the
// connection is then pinned to those addresses, so a DNS answer that changes between the check
// and the connect (rebinding) cannot route the request somewhere else.
import dns from "node:dns";
import net from "node:net";

export type AddressKind = "loopback" | "private" | "link-local" | "unspecified" | "multicast" | "carrier-grade NAT" | "reserved";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (tests pass a fake; see `systemLookup`). */
export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemLookup: Lookup = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

// ---------------------------------------------------------------------------------------------
// Address classification

type Range<T> = [base: T, prefix: number, kind: AddressKind];

// First match wins: more specific ranges come before the ranges that contain them.
const V4_RANGES: Range<number>[] = (
  [
    ["0.0.0.0", 32, "unspecified"],
    ["0.0.0.0", 8, "reserved"], // "this network"
    ["127.0.0.0", 8, "loopback"],
    ["10.0.0.0", 8, "private"],
    ["172.16.0.0", 12, "private"],
    ["192.168.0.0", 16, "private"],
    ["169.254.0.0", 16, "link-local"], // includes 169.254.169.254, the cloud metadata service
    ["100.64.0.0", 10, "carrier-grade NAT"],
    ["224.0.0.0", 4, "multicast"],
    ["240.0.0.0", 4, "reserved"], // includes the broadcast address 255.255.255.255
    ["192.0.0.0", 24, "reserved"], // IETF protocol assignments
    ["192.0.2.0", 24, "reserved"], // documentation
    ["198.18.0.0", 15, "reserved"], // benchmarking
    ["198.51.100.0", 24, "reserved"], // documentation
    ["203.0.113.0", 24, "reserved"], // documentation
  ] as const
).map(([base, prefix, kind]) => [parseIPv4(base)!, prefix, kind]);

const V6_RANGES: Range<bigint>[] = (
  [
    ["::", 128, "unspecified"],
    ["::1", 128, "loopback"],
    ["64:ff9b:1::", 48, "private"], // local-use NAT64
    ["fc00::", 7, "private"], // unique local
    ["fec0::", 10, "private"], // deprecated site-local
    ["fe80::", 10, "link-local"],
    ["ff00::", 8, "multicast"],
    ["100::", 64, "reserved"], // discard-only
    ["2001:db8::", 32, "reserved"], // documentation
    ["2001::", 32, "reserved"], // Teredo: the IPv4 inside is obfuscated, so refuse the prefix
  ] as const
).map(([base, prefix, kind]) => [parseIPv6(base)!, prefix, kind]);

// IPv6 forms that carry an IPv4 address: classified by that IPv4 address.
const V6_EMBEDDING_V4: [base: bigint, prefix: number, shift: bigint][] = [
  [parseIPv6("::ffff:0:0")!, 96, 0n], // IPv4-mapped, e.g. ::ffff:127.0.0.1
  [parseIPv6("::")!, 96, 0n], // IPv4-compatible (deprecated), e.g. ::127.0.0.1
  [parseIPv6("64:ff9b::")!, 96, 0n], // NAT64 well-known prefix
  [parseIPv6("2002::")!, 16, 80n], // 6to4
];

/** What kind of non-public address `ip` is, or null for a public one (or for a non-IP string). */
export function classifyAddress(ip: string): AddressKind | null {
  const v4 = parseIPv4(ip);
  if (v4 !== null) return classifyV4(v4);
  const v6 = parseIPv6(ip);
  if (v6 === null) return null;
  for (const [base, prefix, kind] of V6_RANGES) if (inRange6(v6, base, prefix)) return kind;
  for (const [base, prefix, shift] of V6_EMBEDDING_V4) {
    if (inRange6(v6, base, prefix)) return classifyV4(Number((v6 >> shift) & 0xffffffffn));
  }
  return null;
}

function classifyV4(ip: number): AddressKind | null {
  for (const [base, prefix, kind] of V4_RANGES) {
    const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
    if (((ip & mask) >>> 0) === ((base & mask) >>> 0)) return kind;
  }
  return null;
}

function inRange6(ip: bigint, base: bigint, prefix: number): boolean {
  const shift = BigInt(128 - prefix);
  return ip >> shift === base >> shift;
}

function parseIPv4(text: string): number | null {
  if (!net.isIPv4(text)) return null;
  return text.split(".").reduce((value, octet) => value * 256 + Number(octet), 0);
}

function parseIPv6(text: string): bigint | null {
  let address = text.split("%")[0]!; // a zone id (fe80::1%eth0) does not change the class
  if (!net.isIPv6(address)) return null;
  const lastColon = address.lastIndexOf(":");
  const tail = parseIPv4(address.slice(lastColon + 1));
  if (tail !== null) address = `${address.slice(0, lastColon + 1)}${(tail >>> 16).toString(16)}:${(tail & 0xffff).toString(16)}`;
  const [head, rest] = address.split("::") as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(":").map((group) => BigInt(`0x${group}`)) : []);
  const high = groups(head);
  const low = groups(rest);
  const all = rest === undefined ? high : [...high, ...Array<bigint>(8 - high.length - low.length).fill(0n), ...low];
  return all.reduce((value, group) => (value << 16n) | group, 0n);
}

// ---------------------------------------------------------------------------------------------
// Allow-list

export interface AllowList {
  /** host -> allowed ports; null means every port. Hosts are lower case, IPv6 without brackets. */
  readonly hosts: ReadonlyMap<string, ReadonlySet<number> | null>;
}

/** Splits the raw BULKHEAD_HTTP_ALLOW value (commas or whitespace) into entries. */
export function splitAllowList(raw: string | undefined): string[] {
  return (raw ?? "").split(/[\s,]+/).filter(Boolean);
}

/**
 * Entries are `host`, `host:port`, `[ipv6]`, `[ipv6]:port` or a bare IPv6 address. A host alone
 * allows every port. Throws on a malformed entry: a typo here should stop the engine at start-up.
 */
export function parseAllowList(entries: readonly string[]): AllowList {
  const hosts = new Map<string, Set<number> | null>();
  for (const entry of entries) {
    const match = /^\[([0-9a-f:.]+)\](?::(\d+))?$/i.exec(entry) ?? /^([^:/@\s[\]]+)(?::(\d+))?$/.exec(entry);
    const host = canonicalHost(match ? match[1]! : entry);
    const port = match?.[2] === undefined ? null : Number(match[2]);
    if (host === null || (match === null && !net.isIPv6(host)) || (port !== null && (port < 1 || port > 65535))) {
      throw new Error(`invalid BULKHEAD_HTTP_ALLOW entry "${entry.slice(0, 80)}": expected host, host:port or [ipv6]:port`);
    }
    const ports = hosts.get(host);
    if (port === null) hosts.set(host, null);
    else if (ports !== null) hosts.set(host, new Set([...(ports ?? []), port]));
  }
  return { hosts };
}

/** The host as URL.hostname spells it (lower case, punycode, compressed IPv6), without brackets. */
function canonicalHost(host: string): string | null {
  try {
    return normalizeHost(new URL(`http://${net.isIPv6(host) ? `[${host}]` : host}/`).hostname);
  } catch {
    return null;
  }
}

export function isAllowListed(url: URL, allow: AllowList): boolean {
  const host = normalizeHost(url.hostname);
  if (!allow.hosts.has(host)) return false;
  const ports = allow.hosts.get(host);
  return ports === null || ports === undefined || ports.has(effectivePort(url));
}

function normalizeHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "").toLowerCase();
}

/**
 * The host an outbound request is counted against (per (tenant, host) slots): `host:port` as the
 * step named it, before DNS, lower case, the port made explicit (`[ipv6]:port` for IPv6).
 */
export function hostKey(url: URL): string {
  const host = normalizeHost(url.hostname);
  return `${net.isIPv6(host) ? `[${host}]` : host}:${effectivePort(url)}`;
}

function effectivePort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

// ---------------------------------------------------------------------------------------------
// The check

export type Vetted = { ok: true; addresses: ResolvedAddress[] } | { ok: false; retryable: boolean; message: string };

/**
 * Resolves the URL's host and checks every address. Refusals are permanent and name only what
 * the caller wrote: the literal IP, or the host name and the kind of address it resolves to (not
 * the internal address itself, so the guard cannot be used to map internal DNS).
 */
export async function vetTarget(url: URL, options: { allow: AllowList; lookup: Lookup }): Promise<Vetted> {
  const host = normalizeHost(url.hostname);
  const allowed = isAllowListed(url, options.allow);
  const family = net.isIP(host);
  if (family !== 0) {
    const kind = allowed ? null : classifyAddress(host);
    if (kind) return { ok: false, retryable: false, message: `refused: ${host} is ${article(kind)} address` };
    return { ok: true, addresses: [{ address: host, family: family === 6 ? 6 : 4 }] };
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await options.lookup(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code ?? "lookup failed";
    // Usually a typo, but DNS outages (EAI_AGAIN) are transient: let the retry policy decide.
    return { ok: false, retryable: true, message: `dns lookup of ${host} failed: ${code}` };
  }
  if (addresses.length === 0) return { ok: false, retryable: true, message: `dns lookup of ${host} failed: no addresses` };
  if (!allowed) {
    for (const { address } of addresses) {
      const kind = classifyAddress(address);
      if (kind) return { ok: false, retryable: false, message: `refused: ${host} resolves to ${article(kind)} address` };
    }
  }
  return { ok: true, addresses };
}

function article(kind: AddressKind): string {
  return `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`;
}

/**
 * A `lookup` for http(s).request/net.connect that answers only with the vetted addresses, so the
 * socket connects to what was checked and never asks DNS again.
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): net.LookupFunction {
  return (_hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((entry) => entry.family === options.family) : addresses;
    if (wanted.length === 0) {
      const error: NodeJS.ErrnoException = new Error("no vetted address of the requested family");
      error.code = "ENOTFOUND";
      callback(error, "", 0);
    } else if (options.all) {
      (callback as unknown as (error: null, addresses: ResolvedAddress[]) => void)(null, [...wanted]);
    } else {
      callback(null, wanted[0]!.address, wanted[0]!.family);
    }
  };
}
