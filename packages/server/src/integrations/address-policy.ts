import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { OutboundError } from './connectors.errors.ts';

/**
 * Addresses an SSRF-wary operator does not want connector calls to reach (PARLEY_OUTBOUND_BLOCK_PRIVATE): loopback,
 * private, shared, link-local (cloud metadata at 169.254.169.254), multicast, documentation and reserved ranges —
 * the special-purpose registries of RFC 6890 (IPv4) and RFC 6890/4291 (IPv6).
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network" (RFC 1122)
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // shared address space / CGNAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (RFC 3927)
  ['172.16.0.0', 12], // private (RFC 1918)
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1 (RFC 5737)
  ['192.168.0.0', 16], // private (RFC 1918)
  ['198.18.0.0', 15], // benchmarking (RFC 2544)
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard-only (RFC 6666)
  ['2001:db8::', 32], // documentation (RFC 3849)
  ['fc00::', 7], // unique local (RFC 4193)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** True when `address` (an IP literal) is in a blocked range; IPv4 embedded in IPv6 is judged as IPv4. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const embedded = embeddedIpv4(address);
  if (embedded) return blocked.check(embedded, 'ipv4');
  return blocked.check(address, 'ipv6');
}

/**
 * The IPv4 address carried by an IPv4-mapped (::ffff:a.b.c.d, RFC 4291 §2.5.5.2), IPv4-compatible (::a.b.c.d) or
 * NAT64 (64:ff9b::/96, RFC 6052) IPv6 address, so `::ffff:127.0.0.1` cannot slip past the IPv4 rules.
 */
function embeddedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address);
  if (!groups) return undefined;
  const prefixZero = groups.slice(0, 5).every((g) => g === 0);
  const mapped =
    prefixZero && (groups[5] === 0xffff || (groups[5] === 0 && (groups[6]! > 0 || groups[7]! > 1)));
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (!mapped && !nat64) return undefined;
  return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
}

function expandIpv6(address: string): number[] | undefined {
  let text = address.split('%')[0]!.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    text = `${text.slice(0, dotted.index)}${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  const groups = [...h, ...Array<string>(Math.max(fill, 0)).fill('0'), ...t].map((g) =>
    Number.parseInt(g, 16),
  );
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : undefined;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http.request that resolves every address of the host and refuses the connection if any of them is
 * blocked (a host with one public and one private address is refused as a whole). The socket then connects to an
 * address this function returned, so there is no window between the check and the use (DNS rebinding).
 */
export function guardedLookup(
  hostname: string,
  options: { family?: number | string; hints?: number; all?: boolean },
  callback: LookupCallback,
): void {
  const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
  dnsLookup(hostname, { all: true, family: family as 0 | 4 | 6, hints: options.hints }, (err, addresses) => {
    if (err) return callback(err, []);
    if (addresses.length === 0 || addresses.some((a) => isBlockedAddress(a.address))) {
      return callback(blockedError(hostname) as unknown as NodeJS.ErrnoException, []);
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

export const blockedError = (host: string): OutboundError =>
  new OutboundError(
    'connector_destination_blocked',
    `Calls to ${host} are blocked: it is a loopback, private or reserved address (PARLEY_OUTBOUND_BLOCK_PRIVATE).`,
  );
