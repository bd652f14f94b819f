import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { createConnector, testKey } from '@parley/testing/integrations/connectors-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  api,
  startWebhookSink,
  type WebhookSink,
  webhookTenant,
} from '@parley/testing/webhooks/webhook-sink';
import type { AppContext } from './context.ts';

/** Longest wait for a store connection in this test, and how long building the app holds the event loop here. */
const CONNECT_TIMEOUT_MS = 1_000;
const BUILD_HOLDS_LOOP_MS = 1_500;

/** Runs for `ms` without yielding, as the app's synchronous route and schema compilation does on a busy machine. */
function holdEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose: nothing else may run meanwhile
  }
}

const warningsOf = (server: TestServer) =>
  server.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 40);

// A fresh start — new data folder (with configured keys, so nothing is generated) and a new database or schema —
// logs no warning and no error. The background work (webhook dispatcher, reply line, key reload) starts only once the
// app is built (app.ts `start`): started before, the dispatcher's first claim opened a PostgreSQL connection that
// waited behind the build's compilation and timed out ("could not claim webhook deliveries").
for (const database of TEST_DATABASES) {
  describe(`a fresh start (${database})`, () => {
    let server: TestServer | undefined;
    let sink: WebhookSink | undefined;
    after(async () => {
      await server?.close();
      await sink?.close();
    });

    it('starts its background work only after the app is built, and logs no warning or error', async () => {
      const signingKeys = async (ctx: AppContext) =>
        (await ctx.store.db.selectFrom('oauth_signing_keys').select('kid').execute()).length;
      let keysBeforeStart = -1;
      server = await startTestServer({
        database,
        config: {
          storeConnectTimeoutMs: CONNECT_TIMEOUT_MS,
          masterKeys: `1:${randomBytes(32).toString('base64')}`,
          webchat: { tokenSecret: randomBytes(32).toString('hex') },
        },
        beforeStart: async (app, ctx) => {
          // Built, not started: the first signing key is made by the key store's start, not yet run.
          keysBeforeStart = await signingKeys(ctx);
          // Stands in for the compilation of a large app on a loaded machine (ready() runs it before anything starts).
          app.addHook('onReady', async () => holdEventLoop(BUILD_HOLDS_LOOP_MS));
        },
      });
      assert.equal(keysBeforeStart, 0, 'building the app started nothing');
      assert.equal(await signingKeys(server.ctx), 1, 'start() did');
      // The dispatcher works: a change's event is delivered (so its claims have run, and succeeded).
      sink = await startWebhookSink();
      const tenant = await webhookTenant(server);
      const created = await api(server, tenant.auth, 'POST', '', {
        url: sink.url,
        events: ['connector.api_key_rotated'],
      });
      assert.equal(created.status, 201, created.text);
      const connector = await createConnector(server, tenant.companyId, {
        name: 'crm',
        url: 'http://127.0.0.1:9/',
      });
      await server.ctx.connectors.rotateKey(
        { companyId: tenant.companyId, connectorId: connector.id, apiKey: testKey('start') },
        { actor: 'cli' },
      );
      await waitFor('the delivery', () => sink!.events('connector.api_key_rotated').length > 0);
      assert.deepEqual(warningsOf(server), []);
    });
  });
}
