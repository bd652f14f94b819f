import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BrokerFactory, channelName, LONG, offsetsOf, startNodes, waitForBarrier } from './support.ts';

/**
 * Idempotent publishes: a repeated key returns the first result and publishes once, per channel, for a
 * limited time.
 */
export function runIdempotencyContract(factory: BrokerFactory): void {
  describe(`${factory.name}: broker contract`, () => {
    describe('idempotency', () => {
      it('returns the first result for a repeated key and publishes once', async (t) => {
        const [node] = await startNodes(t, factory);
        const channel = channelName('idem');
        await node.broker.subscribe([channel]);
        const request = { channel, data: '"once"', history: LONG, idempotencyKey: 'k1' };
        const first = await node.broker.publish(request);
        const again = await node.broker.publish({ ...request, data: '"twice"' });
        assert.deepEqual(again, first);
        const other = await node.broker.publish({ ...request, idempotencyKey: 'k2' });
        assert.equal(other?.offset, 2);
        await waitForBarrier(node, [node]);
        assert.deepEqual(
          node.events.publications(channel).map((p) => p.data),
          ['"once"', '"once"'],
        );
        const history = await node.broker.history({ channel, limit: -1, history: LONG });
        assert.deepEqual(offsetsOf(history.publications), [1, 2]);
      });

      it('scopes keys per channel and forgets them after idempotencyTtlMs', async (t) => {
        const [node] = await startNodes(t, factory);
        const a = channelName('idem-a');
        const b = channelName('idem-b');
        const base = { data: '1', history: LONG, idempotencyKey: 'same', idempotencyTtlMs: 200 };
        assert.equal((await node.broker.publish({ ...base, channel: a }))?.offset, 1);
        assert.equal(
          (await node.broker.publish({ ...base, channel: b }))?.offset,
          1,
          'other channel, own key',
        );
        assert.equal((await node.broker.publish({ ...base, channel: a }))?.offset, 1, 'deduplicated');
        await sleep(500);
        assert.equal((await node.broker.publish({ ...base, channel: a }))?.offset, 2, 'key expired');
      });

      it('deduplicates publishes without history too', async (t) => {
        const [node] = await startNodes(t, factory);
        const channel = channelName('idem-nohistory');
        await node.broker.subscribe([channel]);
        const request = { channel, data: '"x"', idempotencyKey: 'k' };
        assert.equal(await node.broker.publish(request), undefined);
        assert.equal(await node.broker.publish(request), undefined);
        await waitForBarrier(node, [node]);
        assert.equal(node.events.publications(channel).length, 1);
      });
    });
  });
}
