import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { type BrokerFactory, channelName, LONG, offsetsOf, publishMany, startNodes } from './support.ts';

/**
 * History reads, what recovery and positioning are built on: `since` exclusive, limits, reverse, a `since`
 * older than the window.
 */
export function runHistoryContract(factory: BrokerFactory): void {
  describe(`${factory.name}: broker contract`, () => {
    describe('history reads', () => {
      async function startWithTenPublications(t: TestContext) {
        const [node] = await startNodes(t, factory);
        const channel = channelName('read');
        const positions = await publishMany(node, channel, 10);
        const epoch = positions[0]?.epoch ?? '';
        const read = (limit: number, since?: number, reverse?: boolean) =>
          node.broker.history({
            channel,
            limit,
            history: LONG,
            ...(since === undefined ? {} : { since: { offset: since, epoch } }),
            ...(reverse ? { reverse } : {}),
          });
        return { node, channel, epoch, read };
      }

      it('treats since as exclusive and honours limit', async (t) => {
        const { read, epoch } = await startWithTenPublications(t);
        const r = await read(3, 4);
        assert.deepEqual(offsetsOf(r.publications), [5, 6, 7]);
        assert.deepEqual(r.position, { offset: 10, epoch });
        assert.deepEqual(offsetsOf((await read(-1, 7)).publications), [8, 9, 10]);
        assert.deepEqual(offsetsOf((await read(-1, 10)).publications), []);
        assert.deepEqual(offsetsOf((await read(2)).publications), [1, 2]);
        assert.deepEqual(offsetsOf((await read(-1, 0)).publications), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      });

      it('limit 0 returns the position only', async (t) => {
        const { read, epoch } = await startWithTenPublications(t);
        const r = await read(0, 3);
        assert.deepEqual(r.publications, []);
        assert.deepEqual(r.position, { offset: 10, epoch });
      });

      it('reverse returns newest first, before since when given', async (t) => {
        const { read } = await startWithTenPublications(t);
        assert.deepEqual(offsetsOf((await read(3, undefined, true)).publications), [10, 9, 8]);
        assert.deepEqual(offsetsOf((await read(-1, 4, true)).publications), [3, 2, 1]);
        assert.deepEqual(offsetsOf((await read(2, 6, true)).publications), [5, 4]);
        assert.deepEqual(offsetsOf((await read(-1, 1, true)).publications), []);
      });

      it('returns from the oldest retained publication when since is older than the window', async (t) => {
        const [node] = await startNodes(t, factory);
        const channel = channelName('trimmed');
        const retention = { ...LONG, size: 4 };
        const [first] = await publishMany(node, channel, 10, retention);
        const r = await node.broker.history({
          channel,
          limit: -1,
          since: { offset: 2, epoch: first?.epoch ?? '' },
          history: retention,
        });
        assert.deepEqual(offsetsOf(r.publications), [7, 8, 9, 10], 'the caller detects the gap itself');
      });
    });
  });
}
