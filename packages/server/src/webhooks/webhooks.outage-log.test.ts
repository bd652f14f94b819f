import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { outageReadyDatabase, type StoreOutage } from '@parley/testing/store-outage';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { createLogger } from '../logging/logger.ts';
import { WARNING_INTERVAL_MS } from '../logging/throttled-warnings.ts';
import { WebhookDispatcher } from './dispatcher.ts';

// While the store is away the dispatcher's claim fails on every poll (100 ms by default): the log gets the first
// failure and then one summary per interval with the count, not a line per poll (logging/throttled-warnings.ts).
for (const database of TEST_DATABASES) {
  describe(`webhook dispatcher through a store outage: no log flood (${database})`, () => {
    let server: TestServer;
    let outage: StoreOutage;
    let closeOutage: () => Promise<void>;
    before(async () => {
      const ready = await outageReadyDatabase(database);
      closeOutage = ready.close;
      server = await startTestServer({ database, config: { ...ready.config, storeConnectTimeoutMs: 500 } });
      outage = ready.outageOf(server.ctx.store.db);
    });
    after(async () => {
      await outage.restore().catch(() => {});
      await server.close();
      await closeOutage();
    });

    it('logs the first failed claim, then one "repeated N times" summary per interval', async () => {
      const lines: Array<{ msg: string; repeated?: number }> = [];
      const logger = createLogger('warn', { write: (line: string) => void lines.push(JSON.parse(line)) });
      let offsetMs = 0;
      // Counts the dispatcher's queries as Kysely compiles them (before they reach the store that refuses them).
      let queries = 0;
      const db = server.ctx.store.db.withPlugin({
        transformQuery: (args) => {
          queries += 1;
          return args.node;
        },
        transformResult: async (args) => args.result,
      });
      const dispatcher = new WebhookDispatcher(
        {
          db,
          dialect: server.ctx.store.dialect,
          sealer: server.ctx.sealer,
          audit: server.ctx.audit,
          logger,
          fetch: (input, init) => fetch(input, init),
        },
        {
          nodeId: 'flood',
          concurrency: 4,
          pollMs: 10,
          leaseMs: 60_000,
          timeoutMs: 2_000,
          clockOffsetMs: () => offsetMs,
        },
      );
      await server.ctx.webhooks.drain(0);
      const claims = () => lines.filter((l) => l.msg.startsWith('could not claim webhook deliveries'));
      try {
        await outage.cut();
        await dispatcher.start({ alone: false });
        await waitFor('the first failed claim', () => claims().length >= 1);
        // The loop keeps polling (every 10 ms, each claim failing at once): wait for a few dozen more tries.
        const afterFirst = queries;
        await waitFor('a few dozen more claims tried', () => queries >= afterFirst + 24, 15_000, 10);
        assert.equal(claims().length, 1, 'repeats within the interval are counted, not written');
        offsetMs += WARNING_INTERVAL_MS + 1_000;
        const [, summary] = await waitFor(
          'the summary after the interval',
          () => claims().length >= 2 && claims(),
        );
        assert.match(
          summary!.msg,
          /^could not claim webhook deliveries \(repeated \d+ times in the last \d+ s\)$/,
        );
        assert.ok((summary!.repeated ?? 0) >= 2, `counted ${summary!.repeated}`);
      } finally {
        await outage.restore();
        await dispatcher.stop(0);
      }
    });
  });
}
