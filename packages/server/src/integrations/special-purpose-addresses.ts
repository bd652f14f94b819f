/**
 * Address blocks an outbound call refuses when the destination policy blocks private destinations
 * (address-policy.ts): the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890, RFC 8190) row by row, plus
 * the blocks those registries leave to others — IPv4 multicast (RFC 5771), and every IPv6 block that the IANA IPv6
 * Address Space registry does not allocate to global unicast (RFC 4291 §2.4: only 2000::/3 is), which takes in
 * multicast, the deprecated site-local fec0::/10 (RFC 3879) and IPv4-compatible addresses (RFC 4291 §2.5.5.1).
 *
 * Every row is refused, the few the registry marks "globally reachable" (anycast services, AS112, NAT64's well-known
 * prefix) included: none of them is a place for a webhook, and translated prefixes would reach IPv4 addresses the
 * IPv4 rows refuse.
 */
export interface AddressBlock {
  /** Network address and prefix length, e.g. `10.0.0.0/8`. */
  readonly prefix: string;
  readonly name: string;
  /** The document that reserves it. */
  readonly rfc: string;
}

/** IANA IPv4 Special-Purpose Address Registry, and IPv4 multicast. */
export const IPV4_BLOCKS: readonly AddressBlock[] = [
  { prefix: '0.0.0.0/8', name: '"This network"', rfc: 'RFC 791 §3.2' },
  { prefix: '0.0.0.0/32', name: '"This host on this network"', rfc: 'RFC 1122 §3.2.1.3' },
  { prefix: '10.0.0.0/8', name: 'Private-Use', rfc: 'RFC 1918' },
  { prefix: '100.64.0.0/10', name: 'Shared Address Space', rfc: 'RFC 6598' },
  { prefix: '127.0.0.0/8', name: 'Loopback', rfc: 'RFC 1122 §3.2.1.3' },
  { prefix: '169.254.0.0/16', name: 'Link Local', rfc: 'RFC 3927' },
  { prefix: '172.16.0.0/12', name: 'Private-Use', rfc: 'RFC 1918' },
  { prefix: '192.0.0.0/24', name: 'IETF Protocol Assignments', rfc: 'RFC 6890 §2.1' },
  { prefix: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix', rfc: 'RFC 7335' },
  { prefix: '192.0.0.8/32', name: 'IPv4 dummy address', rfc: 'RFC 7600' },
  { prefix: '192.0.0.9/32', name: 'Port Control Protocol Anycast', rfc: 'RFC 7723' },
  { prefix: '192.0.0.10/32', name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC 8155' },
  { prefix: '192.0.0.170/32', name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880, RFC 7050 §2.2' },
  { prefix: '192.0.0.171/32', name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880, RFC 7050 §2.2' },
  { prefix: '192.0.2.0/24', name: 'Documentation (TEST-NET-1)', rfc: 'RFC 5737' },
  { prefix: '192.31.196.0/24', name: 'AS112-v4', rfc: 'RFC 7535' },
  { prefix: '192.52.193.0/24', name: 'AMT', rfc: 'RFC 7450' },
  { prefix: '192.88.99.0/24', name: 'Deprecated (6to4 Relay Anycast)', rfc: 'RFC 7526' },
  { prefix: '192.88.99.2/32', name: '6a44-relay anycast address', rfc: 'RFC 6751' },
  { prefix: '192.168.0.0/16', name: 'Private-Use', rfc: 'RFC 1918' },
  { prefix: '192.175.48.0/24', name: 'Direct Delegation AS112 Service', rfc: 'RFC 7534' },
  { prefix: '198.18.0.0/15', name: 'Benchmarking', rfc: 'RFC 2544' },
  { prefix: '198.51.100.0/24', name: 'Documentation (TEST-NET-2)', rfc: 'RFC 5737' },
  { prefix: '203.0.113.0/24', name: 'Documentation (TEST-NET-3)', rfc: 'RFC 5737' },
  { prefix: '224.0.0.0/4', name: 'Multicast', rfc: 'RFC 5771' },
  { prefix: '240.0.0.0/4', name: 'Reserved', rfc: 'RFC 1112 §4' },
  { prefix: '255.255.255.255/32', name: 'Limited Broadcast', rfc: 'RFC 8190, RFC 919 §7' },
];

/** IANA IPv6 Special-Purpose Address Registry, and the IPv6 Address Space outside global unicast 2000::/3. */
export const IPV6_BLOCKS: readonly AddressBlock[] = [
  { prefix: '::1/128', name: 'Loopback Address', rfc: 'RFC 4291' },
  { prefix: '::/128', name: 'Unspecified Address', rfc: 'RFC 4291' },
  { prefix: '::ffff:0:0/96', name: 'IPv4-mapped Address', rfc: 'RFC 4291' },
  { prefix: '64:ff9b::/96', name: 'IPv4-IPv6 Translat.', rfc: 'RFC 6052' },
  { prefix: '64:ff9b:1::/48', name: 'IPv4-IPv6 Translat.', rfc: 'RFC 8215' },
  { prefix: '100::/64', name: 'Discard-Only Address Block', rfc: 'RFC 6666' },
  { prefix: '100:0:0:1::/64', name: 'Dummy IPv6 Prefix', rfc: 'RFC 9780' },
  { prefix: '2001::/23', name: 'IETF Protocol Assignments', rfc: 'RFC 2928' },
  { prefix: '2001::/32', name: 'TEREDO', rfc: 'RFC 4380, RFC 8190' },
  { prefix: '2001:1::1/128', name: 'Port Control Protocol Anycast', rfc: 'RFC 7723' },
  { prefix: '2001:1::2/128', name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC 8155' },
  { prefix: '2001:1::3/128', name: 'DNS-SD Service Registration Protocol Anycast', rfc: 'RFC 9665' },
  { prefix: '2001:2::/48', name: 'Benchmarking', rfc: 'RFC 5180' },
  { prefix: '2001:3::/32', name: 'AMT', rfc: 'RFC 7450' },
  { prefix: '2001:4:112::/48', name: 'AS112-v6', rfc: 'RFC 7535' },
  { prefix: '2001:10::/28', name: 'Deprecated (previously ORCHID)', rfc: 'RFC 4843' },
  { prefix: '2001:20::/28', name: 'ORCHIDv2', rfc: 'RFC 7343' },
  { prefix: '2001:30::/28', name: 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', rfc: 'RFC 9374' },
  { prefix: '2001:db8::/32', name: 'Documentation', rfc: 'RFC 3849' },
  { prefix: '2002::/16', name: '6to4', rfc: 'RFC 3056' },
  { prefix: '2620:4f:8000::/48', name: 'Direct Delegation AS112 Service', rfc: 'RFC 7534' },
  { prefix: '3fff::/20', name: 'Documentation', rfc: 'RFC 9637' },
  { prefix: '5f00::/16', name: 'Segment Routing (SRv6) SIDs', rfc: 'RFC 9602' },
  { prefix: 'fc00::/7', name: 'Unique-Local', rfc: 'RFC 4193, RFC 8190' },
  { prefix: 'fe80::/10', name: 'Link-Local Unicast', rfc: 'RFC 4291' },
  // IANA IPv6 Address Space: everything but 2000::/3 (and the blocks above) is reserved, or not unicast.
  { prefix: '::/96', name: 'IPv4-compatible Address (deprecated)', rfc: 'RFC 4291 §2.5.5.1' },
  { prefix: '::/8', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: '100::/8', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: '200::/7', name: 'Reserved by IETF', rfc: 'RFC 4048' },
  { prefix: '400::/6', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: '800::/5', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: '1000::/4', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: '4000::/3', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: '6000::/3', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: '8000::/3', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: 'a000::/3', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: 'c000::/3', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: 'e000::/4', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: 'f000::/5', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: 'f800::/6', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: 'fe00::/9', name: 'Reserved by IETF', rfc: 'RFC 4291' },
  { prefix: 'fec0::/10', name: 'Site-Local (deprecated)', rfc: 'RFC 3879' },
  { prefix: 'ff00::/8', name: 'Multicast', rfc: 'RFC 4291' },
];
