import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { HttpResult } from '@parley/testing/http-client';
import {
  basicAuth,
  createTestClient,
  postToken,
  type TestClient,
} from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { generateClientSecret } from './credentials.ts';

const GRANT = 'grant_type=client_credentials';
const LIMIT = 3;
/** The per-address budget: larger than one client's, as by default (600 against 60). */
const ADDRESS_LIMIT = 7;

function assertSlowDown(result: HttpResult): void {
  assert.equal(result.status, 429, result.text);
  assert.equal(result.body.error, 'slow_down');
  assert.match(result.body.error_description, /retry after \d+ seconds/);
  const retryAfter = Number(result.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assert.equal(result.headers.get('cache-control'), 'no-store');
}

// A window opens at its key's first hit (src/ratelimit/), and each test counts on its own IPs and clients, so no test
// can straddle a window's end: there is no clock edge to wait for.
// Memory limiter on SQLite, Redis limiter on PostgreSQL: the same 429 behaviour over HTTP.
const setups = [
  { name: 'memory limiter, sqlite', database: 'sqlite' as const, redis: false },
  { name: 'redis limiter, postgres', database: 'postgres' as const, redis: true },
];

for (const setup of setups) {
  describe(`token endpoint abuse control (${setup.name})`, () => {
    let server: TestServer;
    let ipCounter = 0;
    // trustProxy lets each test speak from its own client IP through X-Forwarded-For.
    const freshIp = () => `10.${setup.redis ? 1 : 2}.${Math.floor(++ipCounter / 250)}.${ipCounter % 250}`;

    before(async () => {
      server = await startTestServer({
        database: setup.database,
        redis: setup.redis,
        config: {
          trustProxy: true,
          oauth: {
            authFailuresPerMinute: LIMIT,
            authFailuresPerMinutePerIp: ADDRESS_LIMIT,
            tokensPerMinute: LIMIT,
          },
          rateLimit: { keyPrefix: `parley-test:${randomBytes(6).toString('hex')}:` },
        },
      });
    });
    after(() => server.close());

    it('refuses an address for one client after repeated failed authentications, even with right credentials; its other clients and other addresses go on', async () => {
      const client = await createTestClient(server.ctx);
      const ip = freshIp();
      for (let i = 0; i < LIMIT; i++) {
        const result = await postToken(server, GRANT, {
          authorization: basicAuth(client.clientId, generateClientSecret()),
          'x-forwarded-for': ip,
        });
        assert.equal(result.status, 401);
      }
      const blocked = await postToken(server, GRANT, {
        authorization: basicAuth(client.clientId, client.secret),
        'x-forwarded-for': ip,
      });
      assertSlowDown(blocked);
      // Another tenant's client behind the same address is not locked out by these failures …
      const neighbour = await createTestClient(server.ctx);
      const sameAddress = await postToken(server, GRANT, {
        authorization: basicAuth(neighbour.clientId, neighbour.secret),
        'x-forwarded-for': ip,
      });
      assert.equal(sameAddress.status, 200, sameAddress.text);
      // … and neither is the client itself anywhere else.
      const elsewhere = await postToken(server, GRANT, {
        authorization: basicAuth(client.clientId, client.secret),
        'x-forwarded-for': freshIp(),
      });
      assert.equal(elsewhere.status, 200, elsewhere.text);
      const [event] = await server.ctx.audit.list({
        type: 'rate_limit.exceeded',
        subject: client.clientId,
        limit: 1,
      });
      assert.equal(event?.details.limit, 'auth_failures_per_ip_and_client');
      assert.equal(event?.details.max, LIMIT);
      assert.equal(event?.ip, ip);
      assert.equal(event?.companyId, client.companyId);
    });

    it('lets no address lock a client out for the others: failures from many addresses leave it usable', async () => {
      const client: TestClient = await createTestClient(server.ctx);
      for (let address = 0; address < 3; address++) {
        const ip = freshIp();
        for (let i = 0; i < LIMIT; i++) {
          const result = await postToken(server, GRANT, {
            authorization: basicAuth(client.clientId, generateClientSecret()),
            'x-forwarded-for': ip,
          });
          assert.equal(result.status, 401);
        }
      }
      const fine = await postToken(server, GRANT, {
        authorization: basicAuth(client.clientId, client.secret),
        'x-forwarded-for': freshIp(),
      });
      assert.equal(fine.status, 200, fine.text);
    });

    it('refuses an address that fails for many clients once its own, larger budget is spent', async () => {
      const ip = freshIp();
      // Fewer than LIMIT failures for each client, ADDRESS_LIMIT in all.
      for (let i = 0; i < ADDRESS_LIMIT; i++) {
        const result = await postToken(server, GRANT, {
          authorization: basicAuth((await createTestClient(server.ctx)).clientId, generateClientSecret()),
          'x-forwarded-for': ip,
        });
        assert.equal(result.status, 401);
      }
      const client = await createTestClient(server.ctx);
      assertSlowDown(
        await postToken(server, GRANT, {
          authorization: basicAuth(client.clientId, client.secret),
          'x-forwarded-for': ip,
        }),
      );
      const [event] = await server.ctx.audit.list({ type: 'rate_limit.exceeded', subject: ip, limit: 1 });
      assert.equal(event?.details.limit, 'auth_failures_per_ip');
      assert.equal(event?.details.max, ADDRESS_LIMIT);
    });

    it('counts requests without any credentials against the address, apart from its clients', async () => {
      const ip = freshIp();
      for (let i = 0; i < LIMIT; i++) {
        assert.equal((await postToken(server, GRANT, { 'x-forwarded-for': ip })).status, 401);
      }
      assertSlowDown(await postToken(server, GRANT, { 'x-forwarded-for': ip }));
      const client = await createTestClient(server.ctx);
      const ok = await postToken(server, GRANT, {
        authorization: basicAuth(client.clientId, client.secret),
        'x-forwarded-for': ip,
      });
      assert.equal(ok.status, 200, ok.text);
    });

    it('does not count malformed requests as failed authentications', async () => {
      const client = await createTestClient(server.ctx);
      const ip = freshIp();
      for (let i = 0; i < LIMIT + 2; i++) {
        const result = await postToken(server, 'grant_type=password', {
          authorization: basicAuth(client.clientId, generateClientSecret()),
          'x-forwarded-for': ip,
        });
        assert.equal(result.status, 400);
      }
      const ok = await postToken(server, GRANT, {
        authorization: basicAuth(client.clientId, client.secret),
        'x-forwarded-for': ip,
      });
      assert.equal(ok.status, 200);
    });

    it('limits the tokens one client may obtain per minute, client by client', async () => {
      const busy = await createTestClient(server.ctx);
      const auth = basicAuth(busy.clientId, busy.secret);
      for (let i = 0; i < LIMIT; i++) {
        assert.equal(
          (await postToken(server, GRANT, { authorization: auth, 'x-forwarded-for': freshIp() })).status,
          200,
        );
      }
      assertSlowDown(await postToken(server, GRANT, { authorization: auth, 'x-forwarded-for': freshIp() }));
      assertSlowDown(await postToken(server, GRANT, { authorization: auth, 'x-forwarded-for': freshIp() }));
      const calm = await createTestClient(server.ctx);
      const other = await postToken(server, GRANT, {
        authorization: basicAuth(calm.clientId, calm.secret),
        'x-forwarded-for': freshIp(),
      });
      assert.equal(other.status, 200);
      // One audit event per window, not one per refused request.
      const events = await server.ctx.audit.list({ type: 'rate_limit.exceeded', subject: busy.clientId });
      assert.equal(events.length, 1);
      assert.equal(events[0]!.details.limit, 'tokens_per_client');
    });
  });
}
