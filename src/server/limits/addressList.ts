/**
 * A set of IP addresses and CIDR ranges (trusted proxies, blocked clients), on node's own `net.BlockList`.
 * Addresses as sockets report them are accepted as they come: an IPv4 client of a dual-stack listener
 * shows as `::ffff:192.0.2.1` and is matched as 192.0.2.1.
 */
import { BlockList, isIP } from "node:net";

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** The address in the form lists hold: IPv4-mapped IPv6 as plain IPv4, zone ids dropped. */
export function canonicalAddress(address: string): string {
  // The common case, on every request: not "::ffff:..." (as sockets write it) and no zone: nothing to change.
  if (address.charCodeAt(0) !== 58 && !address.includes("%")) return address;
  const mapped = MAPPED_V4.exec(address);
  if (mapped) return mapped[1]!;
  const zone = address.indexOf("%");
  return zone === -1 ? address : address.slice(0, zone);
}

export class AddressList {
  readonly #list = new BlockList();
  readonly size: number;

  /** Entries must have passed `AddressList.problem`. */
  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const slash = entry.indexOf("/");
      if (slash === -1) this.#list.addAddress(canonicalAddress(entry), isIP(canonicalAddress(entry)) === 6 ? "ipv6" : "ipv4");
      else {
        const network = entry.slice(0, slash);
        this.#list.addSubnet(network, Number(entry.slice(slash + 1)), isIP(network) === 6 ? "ipv6" : "ipv4");
      }
    }
    this.size = entries.length;
  }

  /** Why an entry is not an address or a CIDR range, or undefined when it is one. */
  static problem(entry: string): string | undefined {
    const slash = entry.indexOf("/");
    const address = slash === -1 ? canonicalAddress(entry) : entry.slice(0, slash);
    const family = isIP(address);
    if (family === 0) return `"${entry.slice(0, 100)}" is not an IP address or a CIDR range such as 192.0.2.0/24 or 2001:db8::/32`;
    if (slash === -1) return undefined;
    const bits = entry.slice(slash + 1);
    const max = family === 4 ? 32 : 128;
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `"${entry.slice(0, 100)}": the prefix length must be a whole number from 0 to ${max}`;
    return undefined;
  }

  has(address: string): boolean {
    if (this.size === 0) return false;
    const canonical = canonicalAddress(address);
    const family = isIP(canonical);
    return family !== 0 && this.#list.check(canonical, family === 6 ? "ipv6" : "ipv4");
  }
}
