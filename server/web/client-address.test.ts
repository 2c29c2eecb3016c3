import { describe, expect, it } from "vitest";
import { clientAddress, parseTrustedProxies, PEER_ADDRESS_HEADER } from "./client-address.ts";

const request = (peer: string | null, forwarded?: string) =>
  new Headers({ ...(peer !== null ? { [PEER_ADDRESS_HEADER]: peer } : {}), ...(forwarded !== undefined ? { "x-forwarded-for": forwarded } : {}) });

describe("clientAddress", () => {
  it("is the socket's address when no proxy is trusted, whatever x-forwarded-for says", () => {
    for (const setting of ["", "0", "  "]) {
      const trusted = parseTrustedProxies(setting);
      expect(clientAddress(request("203.0.113.7", "198.51.100.1"), trusted)).toBe("203.0.113.7");
      expect(clientAddress(request("::ffff:203.0.113.7", "198.51.100.1, 10.0.0.2"), trusted)).toBe("203.0.113.7");
    }
  });

  it("is unknown without the server's peer header (x-forwarded-for alone is never believed)", () => {
    expect(clientAddress(request(null, "198.51.100.1"), parseTrustedProxies(""))).toBeNull();
    expect(clientAddress(request(null, "198.51.100.1"), parseTrustedProxies("1"))).toBeNull();
  });

  it("with a hop count, takes the entry that many hops back, and never goes past the chain's start", () => {
    const one = parseTrustedProxies("1");
    expect(clientAddress(request("10.0.0.5", "198.51.100.1"), one)).toBe("198.51.100.1");
    // A client-sent entry before the real one does not move the answer.
    expect(clientAddress(request("10.0.0.5", "1.2.3.4, 198.51.100.1"), one)).toBe("198.51.100.1");
    const two = parseTrustedProxies("2");
    expect(clientAddress(request("10.0.0.5", "1.2.3.4, 198.51.100.1, 10.0.0.9"), two)).toBe("198.51.100.1");
    expect(clientAddress(request("10.0.0.5"), two)).toBe("10.0.0.5");
  });

  it("with networks, walks back over trusted proxies to the first address that is not one", () => {
    const trusted = parseTrustedProxies("10.0.0.0/8, 192.168.1.1, fd00::/8");
    expect(clientAddress(request("10.0.0.5", "1.2.3.4, 198.51.100.1, 192.168.1.1"), trusted)).toBe("198.51.100.1");
    expect(clientAddress(request("fd00::1", "2001:db8::7"), trusted)).toBe("2001:db8::7");
    // Called directly from outside: the socket is the client, x-forwarded-for is ignored.
    expect(clientAddress(request("198.51.100.9", "1.2.3.4"), trusted)).toBe("198.51.100.9");
    // Garbage in the header is skipped, not believed.
    expect(clientAddress(request("10.0.0.5", "1.2.3.4, not-an-ip"), trusted)).toBe("1.2.3.4");
    // Everything trusted: the far end of the chain.
    expect(clientAddress(request("10.0.0.5", "10.1.1.1"), trusted)).toBe("10.1.1.1");
  });

  it("refuses a setting it cannot read", () => {
    for (const bad of ["10.0.0.0/33", "example.com", "10.0.0.1/8/2", "::1/129", "1.2.3"]) {
      expect(() => parseTrustedProxies(bad), bad).toThrow(/BULKHEAD_TRUSTED_PROXIES/);
    }
  });
});
