import assert from 'node:assert/strict';
import { connect, createServer, type Server } from 'node:net';
import { after, describe, it } from 'node:test';
import { freePort } from '@parley/testing/process';
import { TcpBalancer } from './load-balancer.ts';

/** A backend that answers every connection's first bytes with its own name (and hangs up unless `stay`). */
async function backend(name: string, stay = false): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) =>
    socket.once('data', () => (stay ? socket.write(name) : socket.end(name))),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as { port: number }).port };
}

/** Opens a connection through the balancer, sends a byte and reads the answer. */
function ask(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('?'));
    let answer = '';
    socket.on('data', (d) => {
      answer += d;
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('TCP balancer', () => {
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const close of closers) await close();
  });

  it('takes the nodes in turn and skips one that refuses connections', async () => {
    const a = await backend('a');
    const b = await backend('b');
    const down = await freePort();
    const balancer = new TcpBalancer([a.port, down, b.port]);
    const port = await balancer.listen();
    closers.push(
      () => balancer.close(),
      () => new Promise((r) => a.server.close(() => r())),
      () => new Promise((r) => b.server.close(() => r())),
    );
    const answers: string[] = [];
    for (let i = 0; i < 6; i++) answers.push(await ask(port));
    // Turns go a, (down → b), b, a, (down → b), b: the refused node's turns fall to the next one.
    assert.deepEqual(answers, ['a', 'b', 'b', 'a', 'b', 'b']);
  });

  it('tells which node an open connection went to', async () => {
    const a = await backend('a', true);
    const balancer = new TcpBalancer([a.port]);
    const port = await balancer.listen();
    closers.push(
      () => balancer.close(),
      () => new Promise((r) => a.server.close(() => r())),
    );
    const socket = connect(port, '127.0.0.1', () => socket.write('?'));
    // An answer means the connection is piped through to the backend.
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    assert.equal(balancer.backendOf(socket.localPort!), 0);
    socket.destroy();
  });
});
