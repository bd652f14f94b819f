import { connect, createServer, type Server, type Socket } from 'node:net';

/** One client connection and its upstream, piped both ways while the proxy is not paused. */
interface Link {
  client: Socket;
  upstream: Socket | null;
  /** A side that ended or failed while paused: the other side learns it only on `resume`. */
  closedWhilePaused: boolean;
}

/**
 * A TCP proxy on 127.0.0.1 in front of one port (a Redis) that can be cut off like a network partition, for the
 * outage tests and the fault suite. `pause()` is a blackhole, not a clean close: nothing crosses in either
 * direction, no side learns that the other one closed, and new connections are accepted but go nowhere — as when
 * packets are dropped. On `resume()` what was sent meanwhile flows (TCP delivers it once the path is back),
 * connections opened meanwhile reach the target, and connections one side gave up meanwhile are closed on the
 * other side. `resume({ reset: true })` is a partition the connections did not survive (TCP gave up, a NAT or
 * firewall forgot them): every connection of before the partition is closed on both sides, nothing it buffered
 * is delivered.
 */
export class PausableProxy {
  private readonly server: Server;
  private readonly links = new Set<Link>();
  private paused = false;
  private listeningPort = 0;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {
    this.server = createServer((client) => this.accept(client));
  }

  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
    this.listeningPort = (this.server.address() as { port: number }).port;
    return this.listeningPort;
  }

  get port(): number {
    return this.listeningPort;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.listeningPort}`;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Connections currently held (open on the client side). */
  get connections(): number {
    return this.links.size;
  }

  /** Stops forwarding anything, both ways, on every connection, and holds new ones. */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    for (const link of this.links) this.stopFlow(link);
  }

  /**
   * Lets everything through again: buffered bytes first, then new ones; held connections reach the target. With
   * `reset`, the connections that were connected before the partition are closed instead.
   */
  resume(options: { reset?: boolean } = {}): void {
    if (!this.paused) return;
    this.paused = false;
    for (const link of [...this.links]) {
      if (link.upstream === null) this.connectUpstream(link);
      else if (options.reset) this.reset(link);
      else this.startFlow(link);
    }
  }

  /** Closes every connection at once and stops listening. */
  async close(): Promise<void> {
    for (const link of this.links) {
      link.client.destroy();
      link.upstream?.destroy();
    }
    this.links.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const link: Link = { client, upstream: null, closedWhilePaused: false };
    this.links.add(link);
    client.pause();
    client.on('error', () => this.onSideClosed(link));
    client.on('close', () => this.onSideClosed(link));
    if (!this.paused) this.connectUpstream(link);
  }

  private connectUpstream(link: Link): void {
    const upstream = connect(this.targetPort, this.targetHost);
    link.upstream = upstream;
    upstream.pause();
    upstream.on('error', () => this.onSideClosed(link));
    upstream.on('close', () => this.onSideClosed(link));
    upstream.once('connect', () => {
      if (!this.paused) this.startFlow(link);
    });
  }

  private startFlow(link: Link): void {
    const { client, upstream } = link;
    if (upstream === null || upstream.connecting) return;
    client.pipe(upstream);
    upstream.pipe(client);
    if (link.closedWhilePaused) {
      // What the closed side sent before closing is flushed first (end, not destroy), then the other side closes.
      client.end();
      upstream.end();
    }
  }

  private stopFlow(link: Link): void {
    const { client, upstream } = link;
    client.unpipe();
    client.pause();
    if (upstream !== null) {
      upstream.unpipe();
      upstream.pause();
    }
  }

  private reset(link: Link): void {
    this.links.delete(link);
    link.client.resetAndDestroy();
    link.upstream?.resetAndDestroy();
  }

  /** One side ended or failed: closed on the other side now, or once the partition is over. */
  private onSideClosed(link: Link): void {
    if (!this.links.has(link)) return;
    if (this.paused) {
      link.closedWhilePaused = true;
      return;
    }
    this.links.delete(link);
    link.client.destroy();
    link.upstream?.destroy();
  }
}
