import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type HttpResult, http } from '@parley/testing/http-client';
import {
  basicAuth,
  createTestClient,
  postToken,
  type TestClient,
} from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';

const GRANT = 'grant_type=client_credentials';
const DEFAULT_TOKENS = 40;
const DEFAULT_API_CALLS = 50;

const grant = (server: TestServer, client: TestClient) =>
  postToken(server, GRANT, { authorization: basicAuth(client.clientId, client.secret) });
const whoami = (server: TestServer, token: string) =>
  http(`${server.baseUrl}/platform/v1/auth/whoami`, { headers: { authorization: `Bearer ${token}` } });

/** The structured fields of draft-ietf-httpapi-ratelimit-headers on one answer. */
function assertRateLimit(result: HttpResult, policy: string, quota: number, remaining: number): void {
  assert.equal(result.headers.get('ratelimit-policy'), `"${policy}";q=${quota};w=60`, result.text);
  const state = result.headers.get('ratelimit') ?? '';
  const match = new RegExp(`^"${policy}";r=(\\d+);t=(\\d+)$`).exec(state);
  assert.ok(match, `RateLimit: ${state}`);
  assert.equal(Number(match[1]), remaining);
  assert.ok(Number(match[2]) >= 1 && Number(match[2]) <= 60, `t of ${state}`);
}

function assertRetryAfter(result: HttpResult): void {
  const retryAfter = Number(result.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
}

// Memory limiter on SQLite (one node), Redis limiter on PostgreSQL with two nodes that share the counts.
const setups = [
  { name: 'memory limiter, sqlite', database: 'sqlite' as const, redis: false },
  { name: 'redis limiter, postgres, two nodes', database: 'postgres' as const, redis: true },
];

for (const setup of setups) {
  describe(`per-client quotas (${setup.name})`, () => {
    let nodeA: TestServer;
    let nodeB: TestServer;
    /** Alternates between the nodes when there are two, so every count below is the cluster's. */
    let turn = 0;
    const anyNode = () => (turn++ % 2 === 0 ? nodeA : nodeB);

    before(async () => {
      const config = {
        publicUrl: 'http://parley.test',
        oauth: {
          audience: 'http://parley.test',
          tokensPerMinute: DEFAULT_TOKENS,
          apiCallsPerMinute: DEFAULT_API_CALLS,
        },
        rateLimit: { keyPrefix: `parley-test:${randomBytes(6).toString('hex')}:` },
      };
      nodeA = await startTestServer({ database: setup.database, redis: setup.redis, config });
      nodeB = setup.redis
        ? await startTestServer({ database: setup.database, redis: true, config, shareWith: nodeA })
        : nodeA;
    });
    after(async () => {
      if (nodeB !== nodeA) await nodeB.close();
      await nodeA.close();
    });

    it('token answers carry the client’s token quota; over its own quota, 429 slow_down client_quota_exceeded', async () => {
      const limited = await createTestClient(nodeA.ctx);
      await nodeA.ctx.oauth.quotas.set({
        companyId: limited.companyId,
        clientId: limited.clientId,
        quotas: { tokensPerMinute: 3 },
      });
      for (let i = 0; i < 3; i++) {
        const ok = await grant(anyNode(), limited);
        assert.equal(ok.status, 200, ok.text);
        assertRateLimit(ok, 'tokens', 3, 2 - i);
      }
      const refused = await grant(anyNode(), limited);
      assert.equal(refused.status, 429, refused.text);
      assert.equal(refused.body.error, 'slow_down');
      assert.equal(refused.body.code, 'client_quota_exceeded');
      assertRetryAfter(refused);
      assertRateLimit(refused, 'tokens', 3, 0);
      // Another client keeps the default quota and is not touched by the first one's count.
      const other = await createTestClient(nodeA.ctx);
      const fine = await grant(anyNode(), other);
      assert.equal(fine.status, 200);
      assertRateLimit(fine, 'tokens', DEFAULT_TOKENS, DEFAULT_TOKENS - 1);
    });

    it('API calls count against the client’s API quota on every answer; over it, problem+json 429 with Retry-After', async () => {
      const client = await createTestClient(nodeA.ctx);
      const token = (await grant(nodeA, client)).body.access_token as string;
      const first = await whoami(anyNode(), token);
      assert.equal(first.status, 200, first.text);
      assertRateLimit(first, 'api', DEFAULT_API_CALLS, DEFAULT_API_CALLS - 1);

      await nodeA.ctx.oauth.quotas.set({
        companyId: client.companyId,
        clientId: client.clientId,
        quotas: { apiCallsPerMinute: 3 },
      });
      // The quota read through nodeA's `set` applies there at once (nodeB reads it within QUOTA_CACHE_MS).
      const second = await whoami(nodeA, token);
      assertRateLimit(second, 'api', 3, 1);
      const third = await whoami(nodeA, token);
      assert.equal(third.status, 200);
      assertRateLimit(third, 'api', 3, 0);
      const refused = await whoami(nodeA, token);
      assert.equal(refused.status, 429, refused.text);
      assert.match(refused.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(refused.body.code, 'client_quota_exceeded');
      assertRetryAfter(refused);
      assertRateLimit(refused, 'api', 3, 0);
      // Routes without a bearer token carry no quota headers.
      const open = await http(`${nodeA.baseUrl}/.well-known/jwks.json`);
      assert.equal(open.headers.get('ratelimit'), null);
    });

    it('an API quota is shared by every node of the cluster', async () => {
      const client = await createTestClient(nodeA.ctx);
      await nodeA.ctx.oauth.quotas.set({
        companyId: client.companyId,
        clientId: client.clientId,
        quotas: { apiCallsPerMinute: 4 },
      });
      const token = (await grant(nodeA, client)).body.access_token as string;
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await whoami(anyNode(), token)).status);
      // nodeB may still hold the default for QUOTA_CACHE_MS; with one shared count, whatever the quota each node
      // applies, the calls before the count reaches 4 pass and later ones on nodeA are refused.
      assert.deepEqual(statuses.slice(0, 4), [200, 200, 200, 200]);
      assert.equal((await whoami(nodeA, token)).status, 429);
    });

    it('null gives a client the default back; out-of-range quotas are invalid_quota', async () => {
      const client = await createTestClient(nodeA.ctx);
      const set = await nodeA.ctx.oauth.quotas.set({
        companyId: client.companyId,
        clientId: client.clientId,
        quotas: { tokensPerMinute: 7, apiCallsPerMinute: 9 },
      });
      assert.deepEqual(set, { tokensPerMinute: 7, apiCallsPerMinute: 9 });
      const back = await nodeA.ctx.oauth.quotas.set({
        companyId: client.companyId,
        clientId: client.clientId,
        quotas: { tokensPerMinute: null },
      });
      assert.deepEqual(back, { tokensPerMinute: null, apiCallsPerMinute: 9 });
      assertRateLimit(await grant(nodeA, client), 'tokens', DEFAULT_TOKENS, DEFAULT_TOKENS - 1);
      await assert.rejects(
        nodeA.ctx.oauth.quotas.set({
          companyId: client.companyId,
          clientId: client.clientId,
          quotas: { apiCallsPerMinute: 0 },
        }),
        { code: 'invalid_quota' },
      );
      const [event] = await nodeA.ctx.audit.list({
        type: 'api_client.quotas_changed',
        subject: client.clientId,
      });
      assert.equal(event?.details.tokens_per_minute, null);
      assert.equal(event?.details.api_calls_per_minute, 9);
    });
  });
}
