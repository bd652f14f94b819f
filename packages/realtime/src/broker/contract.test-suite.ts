/**
 * The one contract every `Broker` + `PresenceManager` pair must honour (see `types.ts`). `memory.test.ts` and
 * `redis.test.ts` run it against their implementation; rules come from the protocol brief §5 (history/recovery)
 * and §7 (scaling).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BrokerError } from './errors.ts';
import type {
  Broker,
  BrokerEventHandler,
  ClientInfo,
  HistoryRetention,
  PresenceManager,
  Publication,
} from './types.ts';

export interface BrokerNode {
  broker: Broker;
  presence: PresenceManager;
}

export interface ContractTarget {
  /**
   * Builds `count` nodes sharing one fresh, empty backend (for Redis: one new key prefix, one connection set per
   * node). The suite calls `run` on each broker itself and closes every node when the test ends.
   */
  createNodes(count: number): Promise<BrokerNode[]>;
  /** True when events reach the handlers before `publish` (or publishJoin/Leave/Control) resolves. */
  synchronousDelivery: boolean;
}

type BrokerEvent =
  | { kind: 'pub'; channel: string; publication: Publication; epoch: string | undefined }
  | { kind: 'join' | 'leave'; channel: string; info: ClientInfo }
  | { kind: 'control'; message: string };

/** Records every event a node receives, so tests can wait for and inspect them. */
class Recorder implements BrokerEventHandler {
  readonly events: BrokerEvent[] = [];

  onPublication(channel: string, publication: Publication, epoch: string | undefined): void {
    this.events.push({ kind: 'pub', channel, publication, epoch });
  }

  onJoin(channel: string, info: ClientInfo): void {
    this.events.push({ kind: 'join', channel, info });
  }

  onLeave(channel: string, info: ClientInfo): void {
    this.events.push({ kind: 'leave', channel, info });
  }

  onControl(message: string): void {
    this.events.push({ kind: 'control', message });
  }

  publications(channel: string): Publication[] {
    return this.events.flatMap((e) => (e.kind === 'pub' && e.channel === channel ? [e.publication] : []));
  }

  controls(): string[] {
    return this.events.flatMap((e) => (e.kind === 'control' ? [e.message] : []));
  }
}

interface RunningNode extends BrokerNode {
  events: Recorder;
}

const WAIT_LIMIT_MS = 10_000;

async function waitFor(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_LIMIT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const LONG: HistoryRetention = { size: 100, ttlMs: 60_000, metaTtlMs: 600_000 };

function channelName(label: string): string {
  return `test:${label}.${randomUUID().slice(0, 8)}`;
}

function info(user: string, client: string = randomUUID()): ClientInfo {
  return { user, client };
}

export function runBrokerContract(name: string, target: ContractTarget): void {
  async function start(t: TestContext, count = 1): Promise<RunningNode[]> {
    const nodes = await target.createNodes(count);
    t.after(async () => {
      for (const node of nodes) {
        await node.broker.close();
        await node.presence.close();
      }
    });
    const running: RunningNode[] = [];
    for (const node of nodes) {
      const events = new Recorder();
      await node.broker.run(events);
      running.push({ ...node, events });
    }
    return running;
  }

  /**
   * Everything a node published before this resolves has been delivered to `receiver`: control messages travel
   * the same ordered path as publications (one command stream out, one subscriber stream in).
   */
  async function barrier(sender: RunningNode, receivers: RunningNode[]): Promise<void> {
    const token = `barrier:${randomUUID()}`;
    await sender.broker.publishControl(token);
    await Promise.all(
      receivers.map((node) =>
        waitFor('barrier control message', () => node.events.controls().includes(token)),
      ),
    );
  }

  async function publishMany(node: RunningNode, channel: string, count: number, retention = LONG) {
    const positions = [];
    for (let i = 1; i <= count; i++) {
      positions.push(
        await node.broker.publish({ channel, data: JSON.stringify({ n: i }), history: retention }),
      );
    }
    return positions;
  }

  const offsetsOf = (publications: Publication[]) => publications.map((p) => p.offset);

  describe(`${name}: broker contract`, () => {
    describe('streams and offsets', () => {
      it('gives gapless offsets from 1 under one stable epoch and returns the position', async (t) => {
        const [node] = await start(t);
        const channel = channelName('offsets');
        const positions = await publishMany(node, channel, 5);
        assert.deepEqual(
          positions.map((p) => p?.offset),
          [1, 2, 3, 4, 5],
        );
        const epoch = positions[0]?.epoch;
        assert.match(epoch ?? '', /^[a-zA-Z]{8}$/);
        assert.ok(
          positions.every((p) => p?.epoch === epoch),
          'one epoch for all',
        );
        const history = await node.broker.history({ channel, limit: -1, history: LONG });
        assert.deepEqual(offsetsOf(history.publications), [1, 2, 3, 4, 5]);
        assert.deepEqual(history.position, { offset: 5, epoch });
        assert.deepEqual(
          history.publications.map((p) => JSON.parse(p.data).n),
          [1, 2, 3, 4, 5],
        );
      });

      it('keeps channels independent: each has its own offsets and epoch', async (t) => {
        const [node] = await start(t);
        const a = channelName('a');
        const b = channelName('b');
        await publishMany(node, a, 3);
        const [first] = await publishMany(node, b, 1);
        assert.equal(first?.offset, 1);
        const historyA = await node.broker.history({ channel: a, limit: 0, history: LONG });
        assert.equal(historyA.position.offset, 3);
        assert.notEqual(historyA.position.epoch, first?.epoch);
      });

      it('orders concurrent publishes: delivered offsets are gapless and ascending', async (t) => {
        const [node] = await start(t);
        const channel = channelName('concurrent');
        await node.broker.subscribe([channel]);
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            node.broker.publish({ channel, data: String(i), history: LONG }),
          ),
        );
        assert.deepEqual(
          results.map((r) => r?.offset).sort((x, y) => (x ?? 0) - (y ?? 0)),
          Array.from({ length: 50 }, (_, i) => i + 1),
        );
        await waitFor('50 publications', () => node.events.publications(channel).length === 50);
        assert.deepEqual(
          offsetsOf(node.events.publications(channel)),
          Array.from({ length: 50 }, (_, i) => i + 1),
        );
      });

      it('reports offset 0 and creates the epoch when history of an unknown channel is read', async (t) => {
        const [node] = await start(t);
        const channel = channelName('unknown');
        const first = await node.broker.history({ channel, limit: -1, history: LONG });
        assert.deepEqual(first.publications, []);
        assert.equal(first.position.offset, 0);
        assert.match(first.position.epoch, /^[a-zA-Z]{8}$/);
        const second = await node.broker.history({ channel, limit: 0, history: LONG });
        assert.deepEqual(second.position, first.position, 'the read created the meta, so the epoch stays');
        const [published] = await publishMany(node, channel, 1);
        assert.deepEqual(published, { offset: 1, epoch: first.position.epoch });
      });

      it('keeps only the newest `size` publications (sliding window)', async (t) => {
        const [node] = await start(t);
        const channel = channelName('window');
        await publishMany(node, channel, 7, { ...LONG, size: 3 });
        const history = await node.broker.history({ channel, limit: -1, history: LONG });
        assert.deepEqual(offsetsOf(history.publications), [5, 6, 7]);
        assert.equal(history.position.offset, 7);
      });

      it('drops the whole window after ttl without publishes; meta (epoch, offset) survives', async (t) => {
        const [node] = await start(t);
        const channel = channelName('ttl');
        const retention = { size: 10, ttlMs: 300, metaTtlMs: 600_000 };
        const positions = await publishMany(node, channel, 2, retention);
        await waitFor('history to expire', async () => {
          const h = await node.broker.history({ channel, limit: -1, history: retention });
          return h.publications.length === 0;
        });
        const after = await node.broker.history({ channel, limit: -1, history: retention });
        assert.deepEqual(after.position, positions[1], 'epoch and top offset outlive the stream');
        const next = await node.broker.publish({ channel, data: '"next"', history: retention });
        assert.deepEqual(next, { offset: 3, epoch: positions[1]?.epoch });
        const history = await node.broker.history({ channel, limit: -1, history: retention });
        assert.deepEqual(offsetsOf(history.publications), [3]);
      });

      it('pushes the window expiry forward on every publish (not a per-item age)', async (t) => {
        const [node] = await start(t);
        const ttlMs = 1_000;
        const retention = { size: 10, ttlMs, metaTtlMs: 600_000 };
        // Timing guard: on a stalled machine a step can take longer than the ttl; then the run proves nothing
        // and is repeated on a fresh channel (bounded).
        for (let attempt = 1; attempt <= 4; attempt++) {
          const channel = channelName('ttl-forward');
          await node.broker.publish({ channel, data: '1', history: retention });
          const firstDone = Date.now();
          await sleep(ttlMs * 0.6);
          const secondStart = Date.now();
          await node.broker.publish({ channel, data: '2', history: retention });
          const secondDone = Date.now();
          await sleep(ttlMs * 0.6); // now past the first publish's own expiry
          const readStart = Date.now();
          const history = await node.broker.history({ channel, limit: -1, history: retention });
          if (secondStart - firstDone >= ttlMs || readStart - secondDone >= ttlMs * 0.9) continue;
          assert.ok(
            readStart - firstDone > ttlMs,
            'the read happens after the first publish would have expired',
          );
          assert.deepEqual(offsetsOf(history.publications), [1, 2]);
          return;
        }
        assert.fail('machine too slow to observe ttl refresh in 4 attempts');
      });

      it('starts a new epoch at offset 0 after the meta expires', async (t) => {
        const [node] = await start(t);
        const channel = channelName('meta');
        const retention = { size: 10, ttlMs: 100, metaTtlMs: 250 };
        const [first] = await publishMany(node, channel, 3, retention);
        // Reads refresh the meta, so wait without reading; waiting longer only makes expiry more certain.
        await sleep(700);
        const history = await node.broker.history({ channel, limit: -1, history: retention });
        assert.equal(history.position.offset, 0);
        assert.notEqual(history.position.epoch, first?.epoch);
        assert.deepEqual(history.publications, []);
        const next = await node.broker.publish({ channel, data: '1', history: retention });
        assert.deepEqual(next, { offset: 1, epoch: history.position.epoch });
      });

      it('starts a new epoch and drops stale publications when meta expires before the stream', async (t) => {
        const [node] = await start(t);
        const channel = channelName('meta-first');
        const retention = { size: 10, ttlMs: 60_000, metaTtlMs: 200 };
        const [first] = await publishMany(node, channel, 2, retention);
        await sleep(600);
        const next = await node.broker.publish({ channel, data: '"fresh"', history: retention });
        assert.equal(next?.offset, 1);
        assert.notEqual(next?.epoch, first?.epoch);
        const history = await node.broker.history({ channel, limit: -1, history: retention });
        assert.deepEqual(offsetsOf(history.publications), [1]);
        assert.equal(history.publications[0]?.data, '"fresh"');
      });

      it('removeHistory drops the publications but keeps epoch and top offset', async (t) => {
        const [node] = await start(t);
        const channel = channelName('remove');
        const positions = await publishMany(node, channel, 3);
        await node.broker.removeHistory(channel);
        const history = await node.broker.history({ channel, limit: -1, history: LONG });
        assert.deepEqual(history.publications, []);
        assert.deepEqual(history.position, positions[2]);
        const next = await node.broker.publish({ channel, data: '4', history: LONG });
        assert.equal(next?.offset, 4);
      });

      it('keeps data verbatim and carries info, tags and time', async (t) => {
        const [node] = await start(t);
        const channel = channelName('payload');
        await node.broker.subscribe([channel]);
        const data = '{"text":"line1\\nline2 – ünïcødé 🚀","raw":\n  [1, 2]}';
        const publisher: ClientInfo = {
          user: '42',
          client: randomUUID(),
          connInfo: '{"name":"Ada"}',
          chanInfo: '{"role":"agent"}',
        };
        const before = Date.now();
        await node.broker.publish({ channel, data, info: publisher, tags: { kind: 'msg' }, history: LONG });
        await waitFor('the publication', () => node.events.publications(channel).length === 1);
        const [live] = node.events.publications(channel);
        const [stored] = (await node.broker.history({ channel, limit: -1, history: LONG })).publications;
        for (const publication of [live, stored]) {
          assert.equal(publication?.data, data);
          assert.deepEqual(publication?.info, publisher);
          assert.deepEqual(publication?.tags, { kind: 'msg' });
          assert.ok(
            (publication?.time ?? 0) >= before - 1000 && (publication?.time ?? 0) <= Date.now() + 1000,
            'time is the publish time in unix ms',
          );
          assert.equal(publication?.offset, 1);
        }
      });
    });

    describe('history reads', () => {
      async function tenPublications(t: TestContext) {
        const [node] = await start(t);
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
        const { read, epoch } = await tenPublications(t);
        const r = await read(3, 4);
        assert.deepEqual(offsetsOf(r.publications), [5, 6, 7]);
        assert.deepEqual(r.position, { offset: 10, epoch });
        assert.deepEqual(offsetsOf((await read(-1, 7)).publications), [8, 9, 10]);
        assert.deepEqual(offsetsOf((await read(-1, 10)).publications), []);
        assert.deepEqual(offsetsOf((await read(2)).publications), [1, 2]);
        assert.deepEqual(offsetsOf((await read(-1, 0)).publications), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      });

      it('limit 0 returns the position only', async (t) => {
        const { read, epoch } = await tenPublications(t);
        const r = await read(0, 3);
        assert.deepEqual(r.publications, []);
        assert.deepEqual(r.position, { offset: 10, epoch });
      });

      it('reverse returns newest first, before since when given', async (t) => {
        const { read } = await tenPublications(t);
        assert.deepEqual(offsetsOf((await read(3, undefined, true)).publications), [10, 9, 8]);
        assert.deepEqual(offsetsOf((await read(-1, 4, true)).publications), [3, 2, 1]);
        assert.deepEqual(offsetsOf((await read(2, 6, true)).publications), [5, 4]);
        assert.deepEqual(offsetsOf((await read(-1, 1, true)).publications), []);
      });

      it('returns from the oldest retained publication when since is older than the window', async (t) => {
        const [node] = await start(t);
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

    describe('idempotency', () => {
      it('returns the first result for a repeated key and publishes once', async (t) => {
        const [node] = await start(t);
        const channel = channelName('idem');
        await node.broker.subscribe([channel]);
        const request = { channel, data: '"once"', history: LONG, idempotencyKey: 'k1' };
        const first = await node.broker.publish(request);
        const again = await node.broker.publish({ ...request, data: '"twice"' });
        assert.deepEqual(again, first);
        const other = await node.broker.publish({ ...request, idempotencyKey: 'k2' });
        assert.equal(other?.offset, 2);
        await barrier(node, [node]);
        assert.deepEqual(
          node.events.publications(channel).map((p) => p.data),
          ['"once"', '"once"'],
        );
        const history = await node.broker.history({ channel, limit: -1, history: LONG });
        assert.deepEqual(offsetsOf(history.publications), [1, 2]);
      });

      it('scopes keys per channel and forgets them after idempotencyTtlMs', async (t) => {
        const [node] = await start(t);
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
        const [node] = await start(t);
        const channel = channelName('idem-nohistory');
        await node.broker.subscribe([channel]);
        const request = { channel, data: '"x"', idempotencyKey: 'k' };
        assert.equal(await node.broker.publish(request), undefined);
        assert.equal(await node.broker.publish(request), undefined);
        await barrier(node, [node]);
        assert.equal(node.events.publications(channel).length, 1);
      });
    });

    describe('fan-out', () => {
      it('delivers only channels this node subscribed to, until it unsubscribes', async (t) => {
        const [node] = await start(t);
        const wanted = channelName('wanted');
        const other = channelName('other');
        await node.broker.subscribe([wanted]);
        const position = await node.broker.publish({ channel: wanted, data: '1', history: LONG });
        await node.broker.publish({ channel: other, data: '2', history: LONG });
        await node.broker.publish({ channel: wanted, data: '3' });
        await barrier(node, [node]);
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
        await barrier(node, [node]);
        assert.equal(node.events.publications(wanted).length, 2);
        assert.equal(node.events.publications(other).length, 0);
      });

      it('subscribes and unsubscribes many channels in one call', async (t) => {
        const [node] = await start(t);
        const channels = Array.from({ length: 1200 }, (_, i) => channelName(`many${i}`));
        await node.broker.subscribe(channels);
        await Promise.all(channels.map((channel) => node.broker.publish({ channel, data: '1' })));
        await waitFor('1200 publications', () => node.events.events.length === 1200);
        await node.broker.unsubscribe(channels.slice(0, 600));
        await Promise.all(channels.map((channel) => node.broker.publish({ channel, data: '2' })));
        await barrier(node, [node]);
        assert.equal(node.events.events.filter((e) => e.kind === 'pub').length, 1800);
        assert.equal(node.events.publications(channels[0]!).length, 1);
        assert.equal(node.events.publications(channels[1199]!).length, 2);
      });

      it('delivers across nodes only to nodes subscribed to the channel', async (t) => {
        const [a, b, c] = await start(t, 3);
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
        await barrier(a!, [a!]);
        assert.equal(a!.events.publications(channel).length, 0, 'the publisher node did not subscribe');
        const fromB = await b!.broker.history({ channel, limit: -1, history: LONG });
        assert.deepEqual(fromB.position, position, 'history is shared by the nodes');
      });

      it('keeps per-channel order across nodes', async (t) => {
        const [a, b] = await start(t, 2);
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
        const [a, b] = await start(t, 2);
        const channel = channelName('joinleave');
        const elsewhere = channelName('elsewhere');
        await b!.broker.subscribe([channel]);
        const who: ClientInfo = { user: 'u1', client: randomUUID(), connInfo: '{"n":1}' };
        await a!.broker.publishJoin(channel, who);
        await a!.broker.publishLeave(channel, who);
        await a!.broker.publishJoin(elsewhere, who);
        await barrier(a!, [a!, b!]);
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
        const [a, b, c] = await start(t, 3);
        await b!.broker.publishControl('{"op":"disconnect","user":"7"}');
        await waitFor('control on all nodes', () =>
          [a!, b!, c!].every((n) => n.events.controls().includes('{"op":"disconnect","user":"7"}')),
        );
      });

      if (target.synchronousDelivery) {
        it('delivers synchronously, before publish resolves', async (t) => {
          const [a, b] = await start(t, 2);
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

    describe('presence', () => {
      it('adds, lists and removes clients; counts users with anonymous "" as one', async (t) => {
        const [node] = await start(t);
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
        const [node] = await start(t);
        const channel = channelName('nobody');
        assert.deepEqual(await node.presence.presence(channel), {});
        assert.deepEqual(await node.presence.presenceStats(channel), { numClients: 0, numUsers: 0 });
      });

      it('expires entries not refreshed within ttl; a refresh replaces the expiry', async (t) => {
        const [node] = await start(t);
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
        const [a, b] = await start(t, 2);
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

    describe('close', () => {
      it('rejects use after close with a typed error and stops delivery', async (t) => {
        const [a, b] = await start(t, 2);
        const channel = channelName('closed');
        await b!.broker.subscribe([channel]);
        await b!.broker.close();
        await b!.presence.close();
        await b!.broker.close(); // idempotent
        await assert.rejects(
          b!.broker.publish({ channel, data: '1' }),
          (e) => e instanceof BrokerError && e.code === 'broker_closed',
        );
        await assert.rejects(
          b!.presence.presence(channel),
          (e) => e instanceof BrokerError && e.code === 'broker_closed',
        );
        await a!.broker.publish({ channel, data: '1' });
        await barrier(a!, [a!]);
        assert.equal(b!.events.publications(channel).length, 0);
      });
    });
  });
}
