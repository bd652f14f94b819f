import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { createLogger } from '../logging/logger.ts';
import { AuditBatcher, uuidV7 } from './audit-batcher.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidV7', () => {
  it('is an RFC 9562 version-7 UUID that sorts by time', () => {
    const ids = Array.from({ length: 100 }, (_, i) => uuidV7(1_700_000_000_000 + i));
    for (const id of ids) assert.match(id, UUID_V7);
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(Array.from({ length: 1000 }, () => uuidV7(0))).size, 1000);
  });
});

for (const database of TEST_DATABASES) {
  describe(`audit batcher (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ database });
    });
    after(() => server.close());

    it('writes recorded events within its delay, in order, without a flush', async () => {
      const batcher = new AuditBatcher(server.ctx.store.db, createLogger('silent'), {
        maxDelayMs: 30,
        maxBatch: 1000,
      });
      const subject = `s-${Date.now()}`;
      for (let i = 0; i < 25; i++) {
        batcher.record({ type: 'test.batched', subject, ip: '10.0.0.1', details: { i }, actor: 'client:x' });
      }
      const events = await waitFor(
        'the 25 events written',
        async () => {
          const listed = await server.ctx.audit.list({ type: 'test.batched', subject });
          return listed.length >= 25 && listed;
        },
        10_000,
        20,
      );
      assert.equal(events.length, 25);
      // Newest first, as AuditLog lists them; ids are time-ordered UUIDs.
      assert.deepEqual(
        events.map((e) => e.details.i),
        Array.from({ length: 25 }, (_, i) => 24 - i),
      );
      for (const e of events) {
        assert.match(e.id, UUID_V7);
        assert.equal(e.ip, '10.0.0.1');
        assert.equal(e.actor, 'client:x');
      }
    });

    it('writes at once when a batch is full, and whatever is left on close', async () => {
      const batcher = new AuditBatcher(server.ctx.store.db, createLogger('silent'), {
        maxDelayMs: 60_000,
        maxBatch: 10,
      });
      const subject = `full-${Date.now()}`;
      for (let i = 0; i < 13; i++) batcher.record({ type: 'test.full', subject, details: { i } });
      await waitFor(
        'a full batch to be written',
        async () => (await server.ctx.audit.list({ type: 'test.full', subject })).length === 10,
        10_000,
        20,
      );
      await batcher.close();
      assert.equal((await server.ctx.audit.list({ type: 'test.full', subject })).length, 13);
    });
  });
}
