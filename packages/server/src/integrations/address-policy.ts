import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { ConfigError } from '../config/load.ts';
import { OutboundError } from './connectors.errors.ts';
import { type AddressBlock, IPV4_BLOCKS, IPV6_BLOCKS } from './special-purpose-addresses.ts';

/** Every address of a host name, as `dns.lookup(…, { all: true })` gives them. Tests pass a resolver of their own. */
export type Resolver = (
  hostname: string,
  options: { family: 0 | 4 | 6; hints?: number },
) => Promise<LookupAddress[]>;

export interface DestinationPolicyOptions {
  /** Refuse the special-purpose blocks (special-purpose-addresses.ts): PARLEY_OUTBOUND_BLOCK_PRIVATE. */
  blockPrivate: boolean;
  /** Addresses or prefixes (`10.1.2.3`, `10.0.0.0/8`, `fd00::/8`) allowed all the same: PARLEY_OUTBOUND_ALLOW. */
  allow?: readonly string[];
  resolve?: Resolver;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** An address or prefix as bytes: 4 for IPv4, 16 for IPv6. */
interface Prefix {
  bytes: Uint8Array;
  length: number;
}

const NOT_AN_ADDRESS: AddressBlock = { prefix: '', name: 'not an IP address', rfc: '' };

/**
 * Where outbound calls (connectors, event webhooks; one client for all, outbound-http.ts) may connect. With
 * `blockPrivate`, every address in a special-purpose block is refused — unless an `allow` prefix holds it — and it is
 * judged on the address the socket connects to: an IP literal before the request is made (the WHATWG URL parser has
 * already turned `0x7f.1`, `2130706433` or `[::ffff:127.0.0.1]` into their canonical form), a host name in the
 * socket's `lookup` ({@link lookup}), where every A and AAAA answer must pass and the socket then connects to one of
 * exactly those addresses, so a second DNS answer cannot slip in between check and use (DNS rebinding). Each new
 * connection — a redirect's included — is looked up and judged again.
 */
export class DestinationPolicy {
  readonly blocksPrivate: boolean;
  private readonly allowed: Prefix[];
  private readonly blocks: Array<{ prefix: Prefix; block: AddressBlock }>;
  private readonly resolve: Resolver;

  constructor(options: DestinationPolicyOptions) {
    this.blocksPrivate = options.blockPrivate;
    this.resolve = options.resolve ?? resolveAll;
    const invalid = (options.allow ?? []).filter((text) => parsePrefix(text) === undefined);
    if (invalid.length > 0) {
      throw new ConfigError([
        `/integrations/outboundAllow: ${invalid.map((t) => JSON.stringify(t)).join(', ')} is not an IP address or prefix`,
      ]);
    }
    this.allowed = (options.allow ?? []).map((text) => parsePrefix(text)!);
    this.blocks = [...IPV4_BLOCKS, ...IPV6_BLOCKS].map((block) => ({
      prefix: parsePrefix(block.prefix)!,
      block,
    }));
  }

  /** The block that refuses a call to `address` (an IP literal), or undefined when the call may connect to it. */
  refusalOf(address: string): AddressBlock | undefined {
    if (!this.blocksPrivate) return undefined;
    const bytes = addressBytes(address);
    if (!bytes) return NOT_AN_ADDRESS;
    if (this.allowed.some((prefix) => contains(prefix, bytes))) return undefined;
    return this.blocks.find(({ prefix }) => contains(prefix, bytes))?.block;
  }

  refuses(address: string): boolean {
    return this.refusalOf(address) !== undefined;
  }

  /**
   * A `lookup` for `http.request` and `net.connect`: resolves every address of the host and refuses the connection
   * if any of them is refused (a host with one public and one private address is refused as a whole).
   */
  readonly lookup = (
    hostname: string,
    options: { family?: number | string; hints?: number; all?: boolean },
    callback: LookupCallback,
  ): void => {
    const family =
      options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    this.resolve(hostname, { family: family as 0 | 4 | 6, hints: options.hints }).then(
      (addresses) => {
        if (addresses.length === 0 || addresses.some((a) => this.refuses(a.address))) {
          return callback(blockedError(hostname) as unknown as NodeJS.ErrnoException, []);
        }
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}

const resolveAll: Resolver = (hostname, options) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses),
    ),
  );

/** Names neither the address nor its block: whether a name resolves to something private is not the caller's to learn. */
export const blockedError = (host: string): OutboundError =>
  new OutboundError(
    'connector_destination_blocked',
    `Calls to ${host} are refused: it is, or resolves to, a loopback, private, link-local, shared, translated, ` +
      'documentation or other special-purpose address (PARLEY_OUTBOUND_BLOCK_PRIVATE, PARLEY_OUTBOUND_ALLOW).',
  );

function parsePrefix(text: string): Prefix | undefined {
  const [address = '', length, extra] = text.trim().split('/');
  const bytes = addressBytes(address);
  if (!bytes || extra !== undefined) return undefined;
  const bits = length === undefined ? bytes.length * 8 : /^\d{1,3}$/.test(length) ? Number(length) : -1;
  return bits >= 0 && bits <= bytes.length * 8 ? { bytes, length: bits } : undefined;
}

function contains(prefix: Prefix, bytes: Uint8Array): boolean {
  if (prefix.bytes.length !== bytes.length) return false;
  for (let bit = 0; bit < prefix.length; bit += 8) {
    const mask = prefix.length - bit >= 8 ? 0xff : (0xff << (8 - (prefix.length - bit))) & 0xff;
    if ((prefix.bytes[bit / 8]! & mask) !== (bytes[bit / 8]! & mask)) return false;
  }
  return true;
}

/** The bytes of an IPv4 or IPv6 literal (an IPv6 zone, `%eth0`, is dropped); undefined for anything else. */
function addressBytes(address: string): Uint8Array | undefined {
  const family = isIP(address);
  if (family === 4) return Uint8Array.from(address.split('.').map(Number));
  if (family !== 6) return undefined;
  let text = address.split('%')[0]!.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(zeros).fill('0'), ...tailGroups].map((g) =>
    Number.parseInt(g, 16),
  );
  if (groups.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}
