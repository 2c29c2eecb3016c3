import { describe, expect, it } from "vitest";
import { classifyAddress, isAllowListed, parseAllowList, splitAllowList, vetTarget, type Lookup } from "./outbound-guard.ts";

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["ff02::1", "multicast"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["255.255.255.255", "reserved"],
    ["0.1.2.3", "reserved"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::a00:1", "private"],
    ["2002:7f00:1::", "loopback"],
  ])("%s is %s", (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
  });

  it.each(["8.8.8.8", "93.184.216.34", "172.32.0.1", "100.128.0.1", "169.255.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "2002:808:808::", "not-an-ip"])(
    "%s is public (null)",
    (ip) => {
      expect(classifyAddress(ip)).toBeNull();
    },
  );
});

describe("allow-list", () => {
  it("matches a host on every port, host:port on that port only, case and brackets aside", () => {
    const allow = parseAllowList(["LocalHost", "127.0.0.1:8080", "[::1]:9000", "api.example.com:443"]);
    expect(isAllowListed(new URL("http://localhost:1234/"), allow)).toBe(true);
    expect(isAllowListed(new URL("http://127.0.0.1:8080/"), allow)).toBe(true);
    expect(isAllowListed(new URL("http://127.0.0.1:8081/"), allow)).toBe(false);
    expect(isAllowListed(new URL("http://127.0.0.1/"), allow)).toBe(false);
    expect(isAllowListed(new URL("http://[::1]:9000/"), allow)).toBe(true);
    expect(isAllowListed(new URL("http://[0:0::1]:9000/"), allow)).toBe(true);
    expect(isAllowListed(new URL("https://api.example.com/v1"), allow)).toBe(true);
    expect(isAllowListed(new URL("http://api.example.com/v1"), allow)).toBe(false);
    expect(isAllowListed(new URL("http://evil.localhost.example/"), allow)).toBe(false);
  });

  it("splits the environment value on commas and whitespace", () => {
    expect(splitAllowList(" a.test, b.test:80\nc.test ")).toEqual(["a.test", "b.test:80", "c.test"]);
    expect(splitAllowList(undefined)).toEqual([]);
  });

  it.each(["http://a.test", "a.test/path", "user@a.test", "a.test:0", "a.test:70000", "[not-v6]:80"])("rejects %j", (entry) => {
    expect(() => parseAllowList([entry])).toThrow(/invalid BULKHEAD_HTTP_ALLOW entry/);
  });
});

describe("vetTarget", () => {
  const fixed = (answers: Record<string, string[]>): Lookup => async (host) =>
    (answers[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

  it("refuses a name when any of its addresses is internal, without naming the address", async () => {
    const lookup = fixed({ "rebind.test": ["93.184.216.34", "10.1.2.3"] });
    const vetted = await vetTarget(new URL("http://rebind.test/"), { allow: parseAllowList([]), lookup });
    expect(vetted).toEqual({ ok: false, retryable: false, message: "refused: rebind.test resolves to a private address" });
  });

  it("passes every public address on, for the connection to be pinned to", async () => {
    const lookup = fixed({ "public.test": ["93.184.216.34", "2606:2800:220:1::1"] });
    const vetted = await vetTarget(new URL("https://public.test/"), { allow: parseAllowList([]), lookup });
    expect(vetted).toEqual({
      ok: true,
      addresses: [
        { address: "93.184.216.34", family: 4 },
        { address: "2606:2800:220:1::1", family: 6 },
      ],
    });
  });

  it("skips the address check for an allow-listed host but still pins its resolution", async () => {
    const lookup = fixed({ "internal.test": ["10.0.0.7"] });
    const vetted = await vetTarget(new URL("http://internal.test:8080/"), { allow: parseAllowList(["internal.test:8080"]), lookup });
    expect(vetted).toEqual({ ok: true, addresses: [{ address: "10.0.0.7", family: 4 }] });
  });

  it("treats a failed or empty lookup as retryable", async () => {
    const failing: Lookup = async () => {
      throw Object.assign(new Error("getaddrinfo EAI_AGAIN"), { code: "EAI_AGAIN" });
    };
    expect(await vetTarget(new URL("http://down.test/"), { allow: parseAllowList([]), lookup: failing })).toEqual({
      ok: false,
      retryable: true,
      message: "dns lookup of down.test failed: EAI_AGAIN",
    });
    expect(await vetTarget(new URL("http://empty.test/"), { allow: parseAllowList([]), lookup: fixed({}) })).toMatchObject({ ok: false, retryable: true });
  });
});
