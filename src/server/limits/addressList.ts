/**
 * A set of IP addresses and CIDR ranges (trusted proxies, blocked clients), on node's own `net.BlockList`.
 * Addresses as sockets report them are accepted as they come: an IPv4 client of a dual-stack listener
 * shows as `::ffff:192.0.2.1` and is matched as 192.0.2.1.
 */
import { BlockList, isIP } from "node:net";

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

const MAPPED_V4_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * The address in the form lists and throttle keys hold: IPv4-mapped IPv6 as plain IPv4 (in either spelling),
 * zone ids dropped, IPv6 in its one canonical text (RFC 5952: lower case, zeros compressed), so that
 * `2001:DB8:0::1` and `2001:db8::1` are one client.
 */
export function canonicalAddress(address: string): string {
  // The common case, on every request: IPv4 as sockets write it: nothing to change.
  if (!address.includes(":")) return address;
  const mapped = MAPPED_V4.exec(address);
  if (mapped) return mapped[1]!;
  const zone = address.indexOf("%");
  const bare = zone === -1 ? address : address.slice(0, zone);
  if (isIP(bare) !== 6) return bare;
  // WHATWG URL writes IPv6 hosts as RFC 5952 does.
  const canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  const hex = MAPPED_V4_HEX.exec(canonical);
  if (!hex) return canonical;
  const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
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
