import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TIMED_ATTACKS, type TimedAttack } from '@parley/server/internal/hostile-input/attacks';
import {
  rawRequest,
  type TrickleResponse,
  trickleRequest,
} from '@parley/server/internal/hostile-input/raw-http';
import { SCOPES } from '@parley/server/internal/oauth/principal';
import type { TestDatabase } from '../databases.ts';
import { type PortalTestClient, startPortalWorld } from '../portal/portal-fixtures.ts';
import { startTestServer, type TestServer } from '../test-server.ts';
import { waitForSettled } from '../wait.ts';
import { fetchPlatformToken, newVisitor } from '../webchat/webchat-fixtures.ts';

/**
 * The hostile-input suite's timed attacks (packages/server/src/hostile-input/attacks.ts TIMED_ATTACKS) and a
 * flood of sockets, on a server whose time limits are short: every route meets bodies that stall and never end, with the credentials it needs, and one
 * address opens more sockets than it may. The bar, as in hostile-http.suite.ts: no answer is a 5xx, no error is
 * logged — and here also: the server closes every slow connection itself, however the client keeps writing, and an
 * address over its cap is refused at once while another is served.
 */

const LIMIT_MS = 500;
/** Connections per address: more than the attacks below hold at once from 127.0.0.1. */
const CAP = 40;
/** Slow connections at once (two cores are shared by every test file). */
const PARALLEL = 24;
const TRICKLE_MS = 100;
/**
 * The flood test's headers time-out: its slow sockets must still be held when the ones over the cap arrive. At a load
 * average of 21 on two cores 3 s was not enough (a slow socket was cut first, so an over-cap one was admitted).
 */
const HELD_MS = 12_000;
/** Far past the limits and the 2 s the server reads a refused connection's rest before destroying it. */
const GIVE_UP_MS = 15_000;

interface Route {
  method: string;
  url: string;
}

/**
 * The suite on one database: packages/server/src/hostile-input/hostile-timed.sqlite.test.ts and
 * packages/server/src/hostile-input/hostile-timed.postgres.test.ts run it, one process each.
 */
export function hostileTimedSuite(database: TestDatabase): void {
  describe(`hostile input over HTTP: slow requests and many sockets (${database})`, () => {
    let server: TestServer;
    let port: number;
    let acme: PortalTestClient;
    let routes: Route[];
    /** Header lines with every kind of credential, so each route's body is read (bearer, portal, SDK session). */
    let headerLines: string;

    before(async () => {
      let acmeId: string;
      ({ server, acme, acmeId } = await startPortalWorld(database, {
        config: {
          http: { headersTimeoutMs: LIMIT_MS, bodyTimeoutMs: LIMIT_MS, maxConnectionsPerAddress: CAP },
        },
      }));
      port = Number(new URL(server.baseUrl).port);
      routes = server.routes().filter((r) => r.method !== 'HEAD');
      const token = await fetchPlatformToken(server, acmeId, [...SCOPES]);
      const credentials: Array<[string, string]> = [
        ['authorization', `Bearer ${token}`],
        ['cookie', acme.cookie],
        ['x-csrf-token', acme.csrf],
        ...Object.entries(newVisitor(acmeId).headers),
      ];
      headerLines = credentials.map(([name, value]) => `${name}: ${value}\r\n`).join('');
    });
    after(() => server.close());

    /** `url` with its parameters filled (the body never arrives, so no handler runs: any id will do). */
    const fill = (url: string) =>
      url
        .split('/')
        .map((segment) => (segment === '*' ? 'x' : segment.startsWith(':') ? crypto.randomUUID() : segment))
        .join('/');

    /** What breaks the bar in one outcome: a 5xx, or a connection the server did not close. */
    const broken = (what: string, res: TrickleResponse): string | undefined => {
      if (!res.closedByServer) return `${what} → the server kept the connection for ${GIVE_UP_MS} ms`;
      if (res.status >= 500) return `${what} → ${res.status} ${res.body.slice(0, 160)}`;
      return undefined;
    };

    it('timed attacks: every route answers a body that stalls or never ends without a 5xx, and closes the connection', async () => {
      const logsFrom = server.logs.length;
      const cases = TIMED_ATTACKS.flatMap((attack: TimedAttack) =>
        (attack.perRoute ? routes : routes.slice(0, 1)).map((route) => ({
          what: `${route.method} ${route.url} [${attack.name}]`,
          send: () =>
            trickleRequest(
              port,
              {
                start: Buffer.from(attack.start(route.method, fill(route.url), headerLines), 'latin1'),
                trickle: attack.trickle,
                everyMs: TRICKLE_MS,
              },
              { timeoutMs: GIVE_UP_MS },
            ),
        })),
      );
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      for (let i = 0; i < cases.length; i += PARALLEL) {
        await Promise.all(
          cases.slice(i, i + PARALLEL).map(async ({ what, send }) => {
            const res = await send();
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            const failure = broken(what, res);
            if (failure) failures.push(failure);
          }),
        );
      }
      const errors = server.logs
        .slice(logsFrom)
        .filter((line) => (JSON.parse(line) as { level: number }).level >= 50)
        .map((line) => `logged: ${line.slice(0, 300)}`);
      assert.deepEqual([...failures, ...errors], []);
      // Those whose route waited for the body were cut with the time-out's answer; the others had been answered
      // before their body was read (a GET, a refusal), and their connections were closed all the same.
      assert.ok((statuses.get(408) ?? 0) > 0, `statuses: ${JSON.stringify([...statuses])}`);
    });

    it('many sockets from one address: those over the cap are refused at once, another address is served, and the address is admitted again once its slow sockets were cut', async () => {
      // A server of its own whose headers time-out outlasts a loaded machine's delays: the slow sockets must still be
      // held while the ones over the cap are tried, and are cut (408) only after that.
      const flood = await startTestServer({
        database,
        config: {
          http: { headersTimeoutMs: HELD_MS, bodyTimeoutMs: LIMIT_MS, maxConnectionsPerAddress: CAP },
        },
      });
      const floodPort = Number(new URL(flood.baseUrl).port);
      try {
        // The server counts a socket in its own 'connection' listener (packages/server/src/http/connection-limits.ts), which runs before
        // this one: once this one has seen CAP sockets of 127.0.0.2, they are all counted.
        const counted = new Promise<void>((resolve) => {
          let seen = 0;
          const onConnection = (socket: Socket) => {
            if (!socket.remoteAddress?.endsWith('127.0.0.2') || ++seen < CAP) return;
            flood.app.server.off('connection', onConnection);
            resolve();
          };
          flood.app.server.on('connection', onConnection);
        });
        // 127.0.0.2 floods: CAP slow requests that never finish their headers, then more.
        const slow = Array.from({ length: CAP }, () =>
          trickleRequest(
            floodPort,
            {
              start: 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ',
              trickle: 'x',
              everyMs: TRICKLE_MS,
              from: '127.0.0.2',
            },
            { timeoutMs: HELD_MS + GIVE_UP_MS },
          ),
        );
        // Once they are all counted, each further socket of that address is refused before anything is read.
        await waitForSettled(counted, 10_000, `the server to count ${CAP} sockets of 127.0.0.2`);
        const over = await Promise.all(
          Array.from({ length: 10 }, () =>
            trickleRequest(
              floodPort,
              { start: '', trickle: 'x', everyMs: TRICKLE_MS, from: '127.0.0.2' },
              { timeoutMs: GIVE_UP_MS },
            ),
          ),
        );
        const health = await rawRequest(floodPort, { method: 'GET', target: '/healthz' });
        assert.equal(health.status, 200, 'another address is served meanwhile');
        for (const res of over) {
          assert.equal(res.status, 503, res.body);
          assert.equal(JSON.parse(res.body).code, 'too_many_connections');
          assert.ok(res.closedByServer);
        }
        // The slow ones are cut by the headers time-out (408) and closed; then the address is welcome again.
        for (const res of await Promise.all(slow)) {
          assert.ok(res.closedByServer);
          assert.equal(res.status, 408);
        }
        const again = await trickleRequest(
          floodPort,
          {
            start: 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
            trickle: '',
            everyMs: TRICKLE_MS,
            from: '127.0.0.2',
          },
          { timeoutMs: GIVE_UP_MS },
        );
        assert.equal(again.status, 200);
      } finally {
        await flood.close();
      }
    });
  });
}
