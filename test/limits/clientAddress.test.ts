/**
 * Client address and scheme (security.md, Throttling: "the client key is the socket address unless the
 * peer is a configured trusted proxy; then take the address N hops from the right of X-Forwarded-For. A
 * forged header from an untrusted peer changes nothing"; HTTPS: "honour X-Forwarded-Proto / Forwarded
 * only from trusted proxies").
 */
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { AddressList, canonicalAddress } from "../../src/server/limits/addressList.ts";
import { createClientResolver, forwardedElements, hostOfNode } from "../../src/server/limits/clientAddress.ts";

const request = (peer: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress: peer }, headers }) as unknown as IncomingMessage;
const resolver = (proxies: string[], hops = 1, header: "x-forwarded-for" | "forwarded" = "x-forwarded-for") => createClientResolver({ proxies: new AddressList(proxies), hops, header });

describe("client address", () => {
  it("is the socket address when no proxy is trusted, whatever the headers say", () => {
    const r = resolver([]);
    const forged = { "x-forwarded-for": "1.2.3.4", forwarded: "for=5.6.7.8;proto=https", "x-forwarded-proto": "https" };
    expect(r.address(request("203.0.113.9", forged))).toBe("203.0.113.9");
    expect(r.forwardedProto(request("203.0.113.9", forged))).toBeUndefined();
  });

  it("ignores a forged X-Forwarded-For / -Proto from a peer that is not a trusted proxy", () => {
    const r = resolver(["10.0.0.0/8"]);
    const forged = { "x-forwarded-for": "1.2.3.4, 10.0.0.5", "x-forwarded-proto": "https" };
    expect(r.address(request("203.0.113.9", forged))).toBe("203.0.113.9");
    expect(r.forwardedProto(request("203.0.113.9", forged))).toBeUndefined();
    expect(r.fromProxy(request("203.0.113.9"))).toBe(false);
  });

  it("takes the entry N hops from the right of X-Forwarded-For from a trusted proxy", () => {
    const spoofed = { "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.0.0.2" };
    expect(resolver(["10.0.0.0/8"], 1).address(request("10.0.0.1", spoofed))).toBe("10.0.0.2");
    expect(resolver(["10.0.0.0/8"], 2).address(request("10.0.0.1", spoofed))).toBe("198.51.100.7");
    // Fewer entries than hops: the leftmost; none at all: the proxy itself.
    expect(resolver(["10.0.0.0/8"], 3).address(request("10.0.0.1", { "x-forwarded-for": "198.51.100.7" }))).toBe("198.51.100.7");
    expect(resolver(["10.0.0.0/8"], 1).address(request("10.0.0.1"))).toBe("10.0.0.1");
    // Garbage where an address should be: the proxy's own address, never the garbage as a key.
    expect(resolver(["10.0.0.0/8"], 1).address(request("10.0.0.1", { "x-forwarded-for": "unknown" }))).toBe("10.0.0.1");
  });

  it("reads the X-Forwarded-Proto of a trusted proxy, N hops from the right too", () => {
    expect(resolver(["127.0.0.1"]).forwardedProto(request("127.0.0.1", { "x-forwarded-proto": "HTTPS" }))).toBe("https");
    expect(resolver(["127.0.0.1"], 1).forwardedProto(request("127.0.0.1", { "x-forwarded-proto": "https, http" }))).toBe("http");
  });

  it("reads RFC 7239 Forwarded when the proxies are configured to write it, and only then", () => {
    const headers = { forwarded: 'for=6.6.6.6;proto=https, for="[2001:db8::7]:4711";proto=https;by=10.0.0.1', "x-forwarded-for": "9.9.9.9" };
    const viaForwarded = resolver(["10.0.0.1"], 1, "forwarded");
    expect(viaForwarded.address(request("10.0.0.1", headers))).toBe("2001:db8::7");
    expect(viaForwarded.forwardedProto(request("10.0.0.1", headers))).toBe("https");
    // Proxies that write X-Forwarded-For pass a client's Forwarded through untouched: it is not read.
    const viaXff = resolver(["10.0.0.1"], 1, "x-forwarded-for");
    expect(viaXff.address(request("10.0.0.1", headers))).toBe("9.9.9.9");
    expect(viaXff.forwardedProto(request("10.0.0.1", headers))).toBeUndefined();
  });

  it("matches IPv4 clients of a dual-stack socket (::ffff:a.b.c.d) against IPv4 lists", () => {
    const r = resolver(["127.0.0.1"]);
    expect(r.address(request("::ffff:127.0.0.1", { "x-forwarded-for": "192.0.2.1" }))).toBe("192.0.2.1");
    expect(r.address(request("::ffff:203.0.113.1", { "x-forwarded-for": "192.0.2.1" }))).toBe("203.0.113.1");
  });

  it("keys one client by one spelling: IPv6 in its canonical text, IPv4-mapped addresses in either spelling as IPv4", () => {
    const r = resolver(["10.0.0.0/8"]);
    const through = (forwarded: string) => r.address(request("10.0.0.1", { "x-forwarded-for": forwarded }));
    for (const spelling of ["2001:db8::1", "2001:DB8::1", "2001:db8:0:0:0:0:0:1", "2001:0db8::0001"]) expect(through(spelling), spelling).toBe("2001:db8::1");
    for (const spelling of ["10.1.2.3", "::ffff:10.1.2.3", "::FFFF:a01:203", "0:0:0:0:0:ffff:10.1.2.3"]) expect(through(spelling), spelling).toBe("10.1.2.3");
    expect(canonicalAddress("fe80::1%eth0")).toBe("fe80::1");
    expect(canonicalAddress("192.0.2.1")).toBe("192.0.2.1");
  });

  it("parses forwarded nodes", () => {
    expect(hostOfNode("192.0.2.1:8080")).toBe("192.0.2.1");
    expect(hostOfNode("[2001:db8::1]:80")).toBe("2001:db8::1");
    expect(hostOfNode("2001:db8::1")).toBe("2001:db8::1");
    expect(hostOfNode("_hidden")).toBeUndefined();
    expect(forwardedElements('For="[2001:db8:cafe::17]:4711"')).toEqual([{ for: "[2001:db8:cafe::17]:4711" }]);
  });

  it("checks list entries", () => {
    expect(AddressList.problem("10.0.0.0/8")).toBeUndefined();
    expect(AddressList.problem("2001:db8::/129")).toMatch(/prefix length/);
    expect(AddressList.problem("proxy.example.org")).toMatch(/not an IP address/);
    const list = new AddressList(["198.51.100.0/24", "2001:db8::/32", "192.0.2.66"]);
    expect([list.has("198.51.100.200"), list.has("198.51.101.1"), list.has("2001:db8:1::9"), list.has("192.0.2.66"), list.has("::ffff:192.0.2.66")]).toEqual([true, false, true, true, true]);
  });
});
