// A small TCP load balancer in front of the Parley nodes, as production has one: each client connection goes to
// the next node in turn; a node that refuses the connection (stopped, killed, draining) is skipped. It pipes bytes
// both ways, so HTTP and WebSocket go through alike. Visitors and the SDK only ever know its URL.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { onCleanup } from './cleanup.ts';

export class TcpBalancer {
  private readonly server: Server;
  private turn = 0;
  private readonly open = new Set<Socket>();
  /** Client port (as the balancer sees the client) → index of the backend its connection went to. */
  private readonly routes = new Map<number, number>();
  private listening = 0;

  constructor(private readonly backends: number[]) {
    this.server = createServer((client) => this.accept(client));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    this.listening = (this.server.address() as { port: number }).port;
    onCleanup('load balancer', () => this.close());
    return this.listening;
  }

  get url(): string {
    return `http://127.0.0.1:${this.listening}`;
  }

  /** Which backend (index into the ports given) the open connection from client port `port` is piped to. */
  backendOf(clientPort: number): number | undefined {
    return this.routes.get(clientPort);
  }

  close(): Promise<void> {
    for (const socket of this.open) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.open.add(client);
    client.pause();
    client.on('error', () => client.destroy());
    client.on('close', () => this.open.delete(client));
    const first = this.turn++ % this.backends.length;
    this.tryBackend(client, first, 0);
  }

  /** Connects to backend `first + attempt`; on a refusal tries the next one, once around the ring. */
  private tryBackend(client: Socket, first: number, attempt: number): void {
    if (client.destroyed) return;
    const index = (first + attempt) % this.backends.length;
    const upstream = connect(this.backends[index]!, '127.0.0.1');
    this.open.add(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      if (client.destroyed) {
        upstream.destroy();
        return;
      }
      const clientPort = client.remotePort;
      if (clientPort !== undefined) this.routes.set(clientPort, index);
      client.on('close', () => {
        if (clientPort !== undefined && this.routes.get(clientPort) === index) this.routes.delete(clientPort);
        upstream.destroy();
      });
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      upstream.destroy();
      this.open.delete(upstream);
      if (connected) return client.destroy();
      if (err.code === 'ECONNREFUSED' && attempt + 1 < this.backends.length)
        return this.tryBackend(client, first, attempt + 1);
      client.destroy();
    });
    upstream.on('close', () => this.open.delete(upstream));
  }
}
