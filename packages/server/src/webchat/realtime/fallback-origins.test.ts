import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { EMULATION_PATH, HTTP_STREAM_PATH, SSE_PATH } from '@parley/webchat-protocol';

/**
 * The WebSocket fallbacks (HTTP-streaming, SSE, `/emulation`) answer CORS before any token is read, so they admit
 * a browser origin as the SDK's REST preflight does — Parley's own, or one some company or channel lists — and echo
 * nothing else (docs/architecture.md "Realtime composition"). Their connect then meets the per-token check that
 * WebSocket upgrades meet.
 */
for (const database of TEST_DATABASES) {
  describe(`origins of the realtime fallbacks (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ database });
      const company = await server.ctx.companies.create('Listed Co');
      await server.ctx.companies.setAllowedOrigins(company.id, ['https://shop.example']);
    });
    after(() => server.close());

    const preflight = (path: string, origin: string) =>
      fetch(`${server.baseUrl}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });

    it('refuses an origin no company or channel lists, and echoes it nowhere', async () => {
      for (const origin of ['https://evil.example', 'null', 'https://shop.example.evil.example']) {
        for (const path of [EMULATION_PATH, HTTP_STREAM_PATH, SSE_PATH]) {
          const res = await preflight(path, origin);
          await res.body?.cancel();
          assert.equal(res.status, 403, `${origin} ${path}`);
          assert.equal(res.headers.get('access-control-allow-origin'), null);
          assert.equal(res.headers.get('access-control-allow-credentials'), null);
        }
        const post = await fetch(`${server.baseUrl}${EMULATION_PATH}`, {
          method: 'POST',
          headers: { origin, 'content-type': 'application/json' },
          body: JSON.stringify({ session: 'x', node: 'y', data: '{}' }),
        });
        await post.body?.cancel();
        assert.equal(post.status, 403);
        assert.equal(post.headers.get('access-control-allow-origin'), null);
      }
    });

    it('takes a listed origin literally: `_` in the caller’s origin is no wildcard', async () => {
      const res = await preflight(EMULATION_PATH, 'https://sho_.example');
      await res.body?.cancel();
      assert.equal(res.status, 403);
    });

    it('admits an origin a company lists, and Parley’s own', async () => {
      for (const origin of ['https://shop.example', new URL(server.config.publicUrl).origin]) {
        const res = await preflight(EMULATION_PATH, origin);
        await res.body?.cancel();
        assert.equal(res.status, 204, origin);
        assert.equal(res.headers.get('access-control-allow-origin'), origin);
      }
    });
  });
}
