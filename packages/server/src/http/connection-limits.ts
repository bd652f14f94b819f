import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError } from '../errors/app-error.ts';

/** What an address over its cap is told: come back shortly (RFC 9110 §15.6.4, §10.2.3). */
const RETRY_AFTER_SECONDS = 5;

export const tooManyConnections = (max: number) =>
  new AppError(
    503,
    'too_many_connections',
    `This client address already holds ${max} open connections; close some and retry.`,
    {},
    { 'retry-after': String(RETRY_AFTER_SECONDS) },
  );

/**
 * How many connections each client address holds open, against one cap (docs/config.md "HTTP edge"). An address
 * has an entry only while it holds something, so addresses seen once leave nothing behind.
 */
export class AddressCounts {
  private readonly open = new Map<string, number>();

  constructor(readonly max: number) {}

  /** Counts one more for `address`; false, counting nothing, when it already holds `max`. */
  acquire(address: string): boolean {
    const held = this.open.get(address) ?? 0;
    if (held >= this.max) return false;
    this.open.set(address, held + 1);
    return true;
  }

  release(address: string): void {
    const held = this.open.get(address);
    if (held === undefined) return;
    if (held <= 1) this.open.delete(address);
    else this.open.set(address, held - 1);
  }

  heldBy(address: string): number {
    return this.open.get(address) ?? 0;
  }
}

/**
 * Caps the TCP connections per peer address (without a trusted proxy, the peer is the client). Runs before Node's
 * HTTP machinery sees a socket: `server`'s own `connection` listeners (Node's HTTP parser setup) are moved behind
 * the cap, so a refused socket never gets a parser, never reaches a route and costs no more than `refuse` — which
 * answers 503 and closes. An admitted socket is counted until it closes, WebSocket upgrades included.
 */
export function capConnections(
  server: Server,
  counts: AddressCounts,
  refuse: (socket: Socket) => void,
): void {
  const admitted = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const address = addressKey(socket.remoteAddress);
    if (!counts.acquire(address)) return refuse(socket);
    socket.once('close', () => counts.release(address));
    for (const listener of admitted) listener.call(server, socket);
  });
}

/**
 * Behind a trusted proxy every socket comes from the proxy, so the cap applies to the forwarded client address of
 * each request (`X-Forwarded-For`, as Fastify's `request.ip`) while it is served, streaming responses included, and
 * of each WebSocket upgrade until its socket closes. `server`'s `upgrade` listeners (the realtime engine's) are
 * moved behind the cap; call this once they are all registered.
 */
export function capForwardedUpgrades(
  server: Server,
  counts: AddressCounts,
  clientAddress: (request: IncomingMessage) => string,
  refuse: (socket: Duplex) => void,
): void {
  const admitted = server.listeners('upgrade') as Array<
    (request: IncomingMessage, socket: Duplex, head: Buffer) => void
  >;
  server.removeAllListeners('upgrade');
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const address = addressKey(clientAddress(request));
    if (!counts.acquire(address)) return refuse(socket);
    socket.once('close', () => counts.release(address));
    for (const listener of admitted) listener.call(server, request, socket, head);
  });
}

/** One key per address: an IPv4 client seen on a dual-stack socket (`::ffff:10.0.0.1`) is `10.0.0.1`. */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
