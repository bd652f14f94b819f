import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BrokerFactory, channelName, info, startNodes } from './support.ts';

/** Presence: entries per client with a lifetime, user counts, shared by all nodes. */
export function runPresenceContract(factory: BrokerFactory): void {
  describe(`${factory.name}: broker contract`, () => {
    describe('presence', () => {
      it('adds, lists and removes clients; counts users with anonymous "" as one', async (t) => {
        const [node] = await startNodes(t, factory);
        const { presence } = node;
        const channel = channelName('presence');
        const alice1 = info('alice');
        const alice2 = info('alice');
        const anon1 = info('');
        const anon2 = { user: '', client: randomUUID(), connInfo: '{"guest":true}' };
        for (const c of [alice1, alice2, anon1, anon2])
          await presence.addPresence(channel, c.client, c, 60_000);
        assert.deepEqual(await presence.presence(channel), {
          [alice1.client]: alice1,
          [alice2.client]: alice2,
          [anon1.client]: anon1,
          [anon2.client]: anon2,
        });
        assert.deepEqual(await presence.presenceStats(channel), { numClients: 4, numUsers: 2 });
        await presence.removePresence(channel, alice1.client, 'alice');
        await presence.removePresence(channel, anon1.client, '');
        assert.deepEqual(await presence.presenceStats(channel), { numClients: 2, numUsers: 2 });
        await presence.removePresence(channel, alice2.client, 'alice');
        assert.deepEqual(await presence.presence(channel), { [anon2.client]: anon2 });
        assert.deepEqual(await presence.presenceStats(channel), { numClients: 1, numUsers: 1 });
      });

      it('is empty for an unknown channel', async (t) => {
        const [node] = await startNodes(t, factory);
        const channel = channelName('nobody');
        assert.deepEqual(await node.presence.presence(channel), {});
        assert.deepEqual(await node.presence.presenceStats(channel), { numClients: 0, numUsers: 0 });
      });

      it('expires entries not refreshed within ttl; a refresh replaces the expiry', async (t) => {
        const [node] = await startNodes(t, factory);
        const channel = channelName('presence-ttl');
        const stale = info('s');
        const refreshed = info('r');
        await node.presence.addPresence(channel, stale.client, stale, 200);
        await node.presence.addPresence(channel, refreshed.client, refreshed, 200);
        await node.presence.addPresence(channel, refreshed.client, refreshed, 60_000);
        await sleep(500);
        assert.deepEqual(await node.presence.presence(channel), { [refreshed.client]: refreshed });
        assert.deepEqual(await node.presence.presenceStats(channel), { numClients: 1, numUsers: 1 });
      });

      it('is shared by all nodes', async (t) => {
        const [a, b] = await startNodes(t, factory, 2);
        const channel = channelName('presence-global');
        const onA = info('x');
        const onB = info('y');
        await a!.presence.addPresence(channel, onA.client, onA, 60_000);
        await b!.presence.addPresence(channel, onB.client, onB, 60_000);
        for (const node of [a!, b!]) {
          assert.deepEqual(await node.presence.presenceStats(channel), { numClients: 2, numUsers: 2 });
        }
        await b!.presence.removePresence(channel, onA.client, 'x');
        assert.deepEqual(await a!.presence.presence(channel), { [onB.client]: onB });
      });
    });
  });
}
