// A TCP proxy that a test can cut, to take a dependency away from one server the way a stopped database or a broken
// network does — every open connection reset, new ones refused — while the shared service behind it stays up for
// every other test.
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private server: Server | undefined;
  private readonly open = new Set<Socket>();
  private port = 0;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** A proxy on 127.0.0.1 (a free port) to `target` ("host:port"), accepting connections. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target.host, target.port);
    await proxy.listen();
    return proxy;
  }

  /** The port clients connect to (the same after `restore`). */
  get listeningPort(): number {
    return this.port;
  }

  /** Resets every open connection and refuses new ones (ECONNREFUSED), until `restore`. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.open) socket.destroy();
    this.open.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Accepts connections again, on the same port. */
  async restore(): Promise<void> {
    if (!this.server) await this.listen();
  }

  close(): Promise<void> {
    return this.cut();
  }

  private async listen(): Promise<void> {
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  private accept(client: Socket): void {
    const upstream = connect(this.targetPort, this.targetHost);
    for (const socket of [client, upstream]) {
      this.open.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        this.open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
