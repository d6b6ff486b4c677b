// Server-side request forgery: in production a webhook may not reach the machine's own network. The URL's host is
// resolved at send time and every address is checked in the same lookup the connection uses, so a name that
// resolves to a private address (or is changed to one after the endpoint was added) is refused.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

/** Loopback, private, link-local, carrier-grade NAT, unspecified, multicast and other special-purpose ranges. */
const BLOCKED = new BlockList();
for (const [network, prefix] of [["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16],
  ["172.16.0.0", 12], ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4]] as const) {
  BLOCKED.addSubnet(network, prefix, "ipv4");
}
// IPv4-mapped IPv6 addresses are checked as the IPv4 address they carry (isBlockedAddress): a `::ffff:0:0/96` rule
// here would make BlockList match every IPv4 address.
for (const [network, prefix] of [["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96]] as const) {
  BLOCKED.addSubnet(network, prefix, "ipv6");
}

export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return BLOCKED.check(mapped, "ipv4");
  // The hexadecimal spelling URL parsing produces: ::ffff:7f00:1 is 127.0.0.1.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex) {
    const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
    return BLOCKED.check(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, "ipv4");
  }
  return BLOCKED.check(address, family === 4 ? "ipv4" : "ipv6");
}

export class BlockedTarget extends Error {}

/** A lookup for http.request that refuses blocked addresses (the error reaches the request as a connect failure). */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, "", 0);
    const allowed = addresses.filter((entry) => !isBlockedAddress(entry.address));
    if (allowed.length === 0) {
      return callback(new BlockedTarget(`${hostname} resolves only to private or special-purpose addresses`), "", 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
    return callback(null, allowed[0]!.address, allowed[0]!.family);
  });
};

/** A literal IP host is checked directly (no lookup runs for it). */
export function literalHostBlocked(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return isIP(host) !== 0 && isBlockedAddress(host);
}
