import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ClientInfo } from '../../broker/types.ts';
import { waitFor } from '../harness.ts';
import { type BrokerFactory, channelName, LONG, startNodes, waitForBarrier } from './support.ts';

/**
 * PUB/SUB fan-out: publications, join/leave and control messages reach exactly the nodes that should get
 * them, in order.
 */
export function runFanOutContract(factory: BrokerFactory): void {
  describe(`${factory.name}: broker contract`, () => {
    describe('fan-out', () => {
      it('delivers only channels this node subscribed to, until it unsubscribes', async (t) => {
        const [node] = await startNodes(t, factory);
        const wanted = channelName('wanted');
        const other = channelName('other');
        await node.broker.subscribe([wanted]);
        const position = await node.broker.publish({ channel: wanted, data: '1', history: LONG });
        await node.broker.publish({ channel: other, data: '2', history: LONG });
        await node.broker.publish({ channel: wanted, data: '3' });
        await waitForBarrier(node, [node]);
        const pubs = node.events.events.filter((e) => e.kind === 'pub');
        assert.deepEqual(
          pubs.map((e) => e.kind === 'pub' && [e.channel, e.publication.data, e.publication.offset, e.epoch]),
          [
            [wanted, '1', 1, position?.epoch],
            [wanted, '3', undefined, undefined],
          ],
        );
        await node.broker.unsubscribe([wanted]);
        await node.broker.publish({ channel: wanted, data: '4', history: LONG });
        await waitForBarrier(node, [node]);
        assert.equal(node.events.publications(wanted).length, 2);
        assert.equal(node.events.publications(other).length, 0);
      });

      it('subscribes and unsubscribes many channels in one call', async (t) => {
        const [node] = await startNodes(t, factory);
        const channels = Array.from({ length: 1200 }, (_, i) => channelName(`many${i}`));
        await node.broker.subscribe(channels);
        await Promise.all(channels.map((channel) => node.broker.publish({ channel, data: '1' })));
        await waitFor('1200 publications', () => node.events.events.length === 1200);
        await node.broker.unsubscribe(channels.slice(0, 600));
        await Promise.all(channels.map((channel) => node.broker.publish({ channel, data: '2' })));
        await waitForBarrier(node, [node]);
        assert.equal(node.events.events.filter((e) => e.kind === 'pub').length, 1800);
        assert.equal(node.events.publications(channels[0]!).length, 1);
        assert.equal(node.events.publications(channels[1199]!).length, 2);
      });

      it('delivers across nodes only to nodes subscribed to the channel', async (t) => {
        const [a, b, c] = await startNodes(t, factory, 3);
        const channel = channelName('cross');
        await b!.broker.subscribe([channel]);
        await c!.broker.subscribe([channel]);
        const position = await a!.broker.publish({ channel, data: '"hi"', history: LONG });
        await waitFor('b and c to receive', () =>
          [b!, c!].every((n) => n.events.publications(channel).length === 1),
        );
        for (const node of [b!, c!]) {
          const event = node.events.events.find((e) => e.kind === 'pub');
          assert.ok(event?.kind === 'pub', 'a publication event');
          assert.equal(event.publication.data, '"hi"');
          assert.equal(event.publication.offset, position?.offset);
          assert.equal(event.epoch, position?.epoch);
        }
        await waitForBarrier(a!, [a!]);
        assert.equal(a!.events.publications(channel).length, 0, 'the publisher node did not subscribe');
        const fromB = await b!.broker.history({ channel, limit: -1, history: LONG });
        assert.deepEqual(fromB.position, position, 'history is shared by the nodes');
      });

      it('keeps per-channel order across nodes', async (t) => {
        const [a, b] = await startNodes(t, factory, 2);
        const channel = channelName('order');
        await b!.broker.subscribe([channel]);
        for (let i = 1; i <= 30; i++) await a!.broker.publish({ channel, data: String(i), history: LONG });
        await waitFor('30 publications', () => b!.events.publications(channel).length === 30);
        assert.deepEqual(
          b!.events.publications(channel).map((p) => [Number(p.data), p.offset]),
          Array.from({ length: 30 }, (_, i) => [i + 1, i + 1]),
        );
      });

      it('delivers join and leave to subscribed nodes', async (t) => {
        const [a, b] = await startNodes(t, factory, 2);
        const channel = channelName('joinleave');
        const elsewhere = channelName('elsewhere');
        await b!.broker.subscribe([channel]);
        const who: ClientInfo = { user: 'u1', client: randomUUID(), connInfo: '{"n":1}' };
        await a!.broker.publishJoin(channel, who);
        await a!.broker.publishLeave(channel, who);
        await a!.broker.publishJoin(elsewhere, who);
        await waitForBarrier(a!, [a!, b!]);
        assert.deepEqual(
          b!.events.events.filter((e) => e.kind !== 'control'),
          [
            { kind: 'join', channel, info: who },
            { kind: 'leave', channel, info: who },
          ],
        );
        assert.equal(a!.events.events.filter((e) => e.kind !== 'control').length, 0);
      });

      it('delivers control messages to every node, the sender included', async (t) => {
        const [a, b, c] = await startNodes(t, factory, 3);
        await b!.broker.publishControl('{"op":"disconnect","user":"7"}');
        await waitFor('control on all nodes', () =>
          [a!, b!, c!].every((n) => n.events.controls().includes('{"op":"disconnect","user":"7"}')),
        );
      });

      if (factory.synchronousDelivery) {
        it('delivers synchronously, before publish resolves', async (t) => {
          const [a, b] = await startNodes(t, factory, 2);
          const channel = channelName('sync');
          await b!.broker.subscribe([channel]);
          let seenDuringPublish = -1;
          const pending = a!.broker.publish({ channel, data: '1', history: LONG });
          seenDuringPublish = b!.events.publications(channel).length;
          await pending;
          assert.equal(seenDuringPublish, 1);
          await a!.broker.publishControl('c');
          assert.deepEqual(b!.events.controls(), ['c']);
        });
      }
    });
  });
}
