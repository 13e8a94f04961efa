/**
 * Who the client is and how it reached us. The socket's peer address, unless that peer is one of the
 * configured trusted proxies: then the address (and the scheme) its forwarding header gives, `hops`
 * entries from the right, as the proxy nearest to us appends last. Only the header the proxies are
 * configured to write is read (X-Forwarded-For / X-Forwarded-Proto, or RFC 7239 Forwarded): a client can
 * send either, and a proxy passes through the one it does not manage. From any other peer both are
 * ignored, so a forged header changes nothing.
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import { AddressList, canonicalAddress } from "./addressList.ts";

export interface ForwardingRules {
  proxies: AddressList;
  hops: number;
  header: "x-forwarded-for" | "forwarded";
}

export interface ClientResolver {
  /** The client's address (canonical: IPv4-mapped IPv6 as IPv4). */
  address(req: IncomingMessage): string;
  /** The scheme a trusted proxy says the client used; undefined from any other peer or without the header. */
  forwardedProto(req: IncomingMessage): string | undefined;
  /** Whether the socket's peer is a trusted proxy. */
  fromProxy(req: IncomingMessage): boolean;
}

export function createClientResolver(rules: ForwardingRules): ClientResolver {
  const { proxies, hops, header } = rules;
  if (!Number.isInteger(hops) || hops < 1) throw new Error(`createClientResolver: hops must be a whole number from 1, not ${hops}`);
  const peer = (req: IncomingMessage) => canonicalAddress(req.socket.remoteAddress ?? "");
  const fromProxy = (req: IncomingMessage) => proxies.size > 0 && proxies.has(peer(req));
  /** The entry `hops` from the right; the leftmost when the chain is shorter (fewer proxies than configured). */
  const pick = <T>(entries: readonly T[]): T | undefined => entries[entries.length - hops] ?? entries[0];

  return {
    fromProxy,
    address(req) {
      const socketAddress = peer(req);
      if (proxies.size === 0 || !proxies.has(socketAddress)) return socketAddress;
      const value = header === "forwarded" ? pick(forwardedElements(req.headers.forwarded))?.for : pick(listOf(req.headers["x-forwarded-for"]));
      const address = value === undefined ? undefined : hostOfNode(value);
      return address ?? socketAddress;
    },
    forwardedProto(req) {
      if (!fromProxy(req)) return undefined;
      const value = header === "forwarded" ? pick(forwardedElements(req.headers.forwarded))?.proto : pick(listOf(req.headers["x-forwarded-proto"]));
      return value?.toLowerCase();
    },
  };
}

function listOf(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const text = Array.isArray(value) ? value.join(",") : value;
  return text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
}

/** RFC 7239 elements, each with its `for` and `proto` (quotes removed); other parameters are not needed. */
export function forwardedElements(value: string | undefined): Array<{ for?: string; proto?: string }> {
  if (value === undefined) return [];
  return value
    .split(",")
    .map((element) => {
      const out: { for?: string; proto?: string } = {};
      for (const pair of element.split(";")) {
        const equals = pair.indexOf("=");
        if (equals === -1) continue;
        const name = pair.slice(0, equals).trim().toLowerCase();
        let text = pair.slice(equals + 1).trim();
        if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) text = text.slice(1, -1);
        if (name === "for") out.for = text;
        else if (name === "proto") out.proto = text;
      }
      return out;
    })
    .filter((element) => element.for !== undefined || element.proto !== undefined);
}

/** The IP address of a forwarded node (`192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]:4711`, `2001:db8::1`), or undefined for `unknown`, obfuscated names and garbage. */
export function hostOfNode(node: string): string | undefined {
  let host = node;
  if (host.startsWith("[")) {
    const close = host.indexOf("]");
    if (close === -1) return undefined;
    host = host.slice(1, close);
  } else if (isIP(host) === 0 && /^\d+\.\d+\.\d+\.\d+:\d+$/.test(host)) {
    host = host.slice(0, host.lastIndexOf(":"));
  }
  return isIP(canonicalAddress(host)) === 0 ? undefined : canonicalAddress(host);
}
