import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES, testRedisUrl } from '@parley/testing/databases';
import { proxiedPostgres, readOnlySqlite, type StoreOutage } from '@parley/testing/store-outage';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { createLogger } from '../../logging/logger.ts';
import { openStore, type Store } from '../../storage/database.ts';
import { connectFailFastRedis } from '../../storage/redis-client.ts';
import type { MessageEnvelope } from '../messages/message.ts';
import { MessageStore } from '../messages/message-store.ts';
import { type Broadcaster, PendingAnnouncements } from './broadcaster.ts';
import { ConversationsService } from './conversations.service.ts';
import { LiveSnapshots } from './live-snapshots.ts';
import {
  OUTAGE_SEQUENCES,
  RESERVED_SEQUENCES,
  ReplyNotStored,
  ReplyStream,
  type ReplyStreamDeps,
  sequenceAfter,
} from './reply-stream.ts';
import { RedisShownTexts } from './shown-texts.ts';

class Recorder implements Broadcaster {
  readonly envelopes: Array<MessageEnvelope & { history: boolean }> = [];
  async publish(_channel: string, envelope: MessageEnvelope, options: { history: boolean }): Promise<void> {
    this.envelopes.push({ ...envelope, history: options.history });
  }

  get highest(): number {
    return Math.max(...this.envelopes.map((e) => e.sequence));
  }

  textOf(envelope: MessageEnvelope): string {
    return envelope.message_snapshot.blocks
      .filter((b) => b.type === 'markdown')
      .map((b) => (b as { content: string }).content)
      .join('');
  }
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

for (const database of TEST_DATABASES) {
  describe(`reply stream sequences and history (${database})`, () => {
    let server: TestServer;
    let conversationId: string;
    let companyId: string;
    /** A second way into the same database that the tests can take away (see packages/testing/src/store-outage.ts). */
    let cutOff: { store: Store; outage: StoreOutage; close(): Promise<void> };
    before(async () => {
      server = await startTestServer({ database });
      const company = await server.ctx.companies.create('Stream Co');
      const employee = (await server.ctx.digitalEmployees.list(company.id))[0]!;
      companyId = company.id;
      conversationId = (
        await new ConversationsService(server.ctx.store.db, server.ctx.events).create(
          { companyId: company.id, sessionId: randomUUID() },
          employee.id,
        )
      ).id;
      if (database === 'sqlite') {
        cutOff = {
          store: server.ctx.store,
          outage: readOnlySqlite(server.ctx.store.db),
          close: async () => {},
        };
      } else {
        const { url, outage } = await proxiedPostgres();
        const store = await openStore({
          databaseUrl: url,
          schema: server.schema,
          dataDir: server.dataDir,
          connectTimeoutMs: 500,
        });
        cutOff = {
          store,
          outage,
          close: async () => {
            await store.close();
            await outage.close();
          },
        };
      }
    });
    after(async () => {
      await cutOff?.close();
      await server.close();
    });

    function stream(
      store: MessageStore,
      broadcaster: Broadcaster,
      options: { onSuperseded?: () => void; deps?: Partial<ReplyStreamDeps> } = {},
    ) {
      const logger = createLogger('silent');
      return new ReplyStream(
        {
          store,
          broadcaster,
          announcements: new PendingAnnouncements(broadcaster, logger),
          live: new LiveSnapshots(),
          logger,
          flushIntervalMs: 0,
          persistIntervalMs: 60_000,
          storeWaitMs: 30_000,
          ...options.deps,
        },
        companyId,
        conversationId,
        { id: randomUUID(), name: 'Ava' },
        options.onSuperseded,
      );
    }

    it('puts only the complete in history, as the last and highest sequence', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      const recorder = new Recorder();
      const s = stream(store, recorder);
      const { id } = await s.start();
      for (const word of ['Hello ', 'there, ', 'visitor.']) {
        s.append(word);
        await nextTurn();
      }
      await s.complete();
      const completes = recorder.envelopes.filter((e) => e.operation === 'complete');
      assert.equal(completes.length, 1);
      assert.equal(completes[0]!.history, true, 'the complete goes to history');
      assert.deepEqual(
        recorder.envelopes.filter((e) => e.history),
        completes,
        'typing and partials stay out of history',
      );
      assert.ok(recorder.envelopes.length > 2, 'typing and partials were published');
      assert.equal(recorder.envelopes.at(-1), completes[0]);
      assert.equal(completes[0]!.sequence, recorder.highest);
      assert.equal(recorder.textOf(completes[0]!), 'Hello there, visitor.');
      const stored = await store.find(id);
      assert.equal(stored?.status, 'complete');
    });

    it('shows the first words at once: the typing envelope does not start a flush interval', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      const recorder = new Recorder();
      // An interval far longer than the test: had the typing envelope started it, the text would wait a minute.
      const s = stream(store, recorder, { deps: { flushIntervalMs: 60_000 } });
      await s.start();
      s.append('Hello there.');
      await waitFor('the first words', () =>
        recorder.envelopes.some((e) => recorder.textOf(e) === 'Hello there.'),
      );
      assert.deepEqual(
        recorder.envelopes.map((e) => [e.sequence, e.operation, recorder.textOf(e)]),
        [
          [1, 'replace', ''],
          [2, 'replace', 'Hello there.'],
        ],
      );
      await s.complete();
      assert.equal(recorder.envelopes.at(-1)?.operation, 'complete');
    });

    it('coalesces while the node is busy: the first text waits the busy interval after typing, then the pace is normal', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      const recorder = new Recorder();
      let busy = true;
      // A busy interval far longer than the test: whatever went out while busy went out because of a flush due.
      const s = stream(store, recorder, {
        deps: { flushIntervalMs: 0, busy: { now: () => busy, flushIntervalMs: 60_000 } },
      });
      await s.start();
      for (const word of ['Hello ', 'there, ', 'visitor']) {
        s.append(word);
        await nextTurn();
      }
      await s.idle();
      assert.deepEqual(
        recorder.envelopes.map((e) => [e.sequence, e.operation, recorder.textOf(e)]),
        [[1, 'replace', '']],
        'while busy, the words wait together for one partial',
      );
      // The visitors waiting have been taken in: the next word goes at the normal pace, with every word before it.
      busy = false;
      s.append('.');
      await waitFor('the coalesced partial', () => recorder.envelopes.length === 2);
      s.append(' Bye.');
      await waitFor('the next partial', () => recorder.envelopes.length === 3);
      await s.complete();
      assert.deepEqual(
        recorder.envelopes.map((e) => [e.sequence, e.operation, recorder.textOf(e)]),
        [
          [1, 'replace', ''],
          [2, 'replace', 'Hello there, visitor.'],
          [3, 'replace', 'Hello there, visitor. Bye.'],
          [4, 'complete', 'Hello there, visitor. Bye.'],
        ],
      );
    });

    it('a busy interval no longer than the normal one changes nothing: every word goes out at once', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      const recorder = new Recorder();
      const s = stream(store, recorder, {
        deps: { flushIntervalMs: 0, busy: { now: () => true, flushIntervalMs: 0 } },
      });
      await s.start();
      for (const word of ['Hello ', 'there.']) {
        s.append(word);
        await waitFor(`"${word}" shown`, () => recorder.textOf(recorder.envelopes.at(-1)!).endsWith(word));
      }
      await s.complete();
      assert.deepEqual(
        recorder.envelopes.map((e) => [e.sequence, e.operation, recorder.textOf(e)]),
        [
          [1, 'replace', ''],
          [2, 'replace', 'Hello '],
          [3, 'replace', 'Hello there.'],
          [4, 'complete', 'Hello there.'],
        ],
      );
    });

    it('finishing for a dead node lands above every published sequence, and partials stay out of history', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      const recorder = new Recorder();
      const s = stream(store, recorder);
      const { id } = await s.start();
      // Far past the first reservation, with no persist on schedule: the stream must reserve again on its own.
      for (let i = 0; i < RESERVED_SEQUENCES * 2 + 5; i++) {
        s.append(`w${i} `);
        await nextTurn();
      }
      // The node "dies" here, with its writes and publications possibly still in flight. Another one completes the
      // message from what the store says; the dying stream's late writes then find it complete.
      const done = await store.completeAbandoned(id, (blocks) => blocks, sequenceAfter);
      assert.ok(done);
      await s.complete(); // waits for everything the stream had in flight, and stores nothing more
      assert.equal(s.superseded, true);
      const published = recorder.highest;
      assert.ok(published > RESERVED_SEQUENCES, `streamed past one reservation (${published})`);
      assert.ok(
        recorder.envelopes.every((e) => !e.history),
        'partials stay out of history, and the superseded stream announced no complete',
      );
      assert.ok(done.sequence > published, `${done.sequence} > ${published}`);
      assert.equal(
        await store.completeAbandoned(id, (blocks) => blocks, sequenceAfter),
        undefined,
        'only once',
      );
    });

    it('completing for a gone node while its stream still writes takes one read-and-write: never "kept changing"', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      const s = stream(store, new Recorder());
      const started = await s.start();
      // Nodes whose lease lapsed but which still write, as fast as the store lets them (what failed under load:
      // the completer read, a write landed, its conditional write missed, ten times over).
      let reservation = 100;
      const stopped: number[] = [];
      const writer = async (): Promise<void> => {
        for (let i = 0; i < 2_000; i++) {
          if (
            !(await store.persistPartial({ ...started, updated_at: new Date().toISOString() }, ++reservation))
          ) {
            stopped.push(i);
            return;
          }
        }
      };
      const writers = [writer(), writer(), writer(), writer()];
      while (reservation < 150) await nextTurn();
      const done = await store.completeAbandoned(started.id, (blocks) => blocks, sequenceAfter);
      await Promise.all(writers);
      assert.ok(done, 'completed at the first attempt');
      assert.equal(stopped.length, 4, "every writer's next write found the message complete");
      // Concurrent writers commit their reservations in any order: the one read is one of theirs.
      assert.ok(done.sequence > sequenceAfter(100), `${done.sequence}: from a reservation the writers wrote`);
      await s.complete();
    });

    it('keeps streaming while the store is away, within the outage allowance, and a takeover still lands above', async () => {
      const store = new MessageStore(cutOff.store, server.ctx.events);
      const recorder = new Recorder();
      const s = stream(store, recorder, { deps: { persistIntervalMs: 0 } });
      const { id } = await s.start();
      await cutOff.outage.cut();
      try {
        const words = RESERVED_SEQUENCES * 3;
        for (let i = 0; i < words; i++) {
          s.append(`w${i} `);
          await nextTurn();
        }
        await waitFor(
          'the visitor to read the last word',
          () => recorder.envelopes.some((e) => recorder.textOf(e).endsWith(`w${words - 1} `)),
          15_000,
          5,
        );
      } finally {
        await cutOff.outage.restore();
      }
      const published = recorder.highest;
      assert.ok(
        published > RESERVED_SEQUENCES * 2,
        `the visitor kept reading past the reservation it could not renew (${published})`,
      );
      assert.ok(published <= 1 + RESERVED_SEQUENCES + OUTAGE_SEQUENCES);
      // The node dies now: whoever completes the message lands above everything it published.
      const done = await new MessageStore(server.ctx.store, server.ctx.events).completeAbandoned(
        id,
        (blocks) => blocks,
        sequenceAfter,
      );
      assert.ok(done && done.sequence > published, `${done?.sequence} > ${published}`);
      await s.complete();
    });

    it('a completion waits for the store: the whole text is shown meanwhile, then stored and announced complete', async () => {
      const store = new MessageStore(cutOff.store, server.ctx.events);
      const recorder = new Recorder();
      const warnings: string[] = [];
      const logger = createLogger('warn', { write: () => {} }, 'json', (line) => warnings.push(line));
      const s = stream(store, recorder, { deps: { logger } });
      const { id } = await s.start();
      s.append('Hello');
      await nextTurn();
      await cutOff.outage.cut();
      let completed: Promise<unknown>;
      try {
        s.append(', world');
        completed = s.complete();
        // The store is away for a while; the visitor already reads every word, as a partial.
        const last = await waitFor('the whole text to be shown', () => {
          const e = recorder.envelopes.at(-1);
          return e && recorder.textOf(e) === 'Hello, world' ? e : undefined;
        });
        assert.equal(last.operation, 'replace');
        // The store refused the complete (the stream now waits for it): not stored meanwhile.
        await waitFor('the store to refuse the complete', () =>
          warnings.some((l) => l.includes('the store cannot take a completed reply now')),
        );
        assert.equal(
          (
            await server.ctx.store.db
              .selectFrom('messages')
              .select('status')
              .where('id', '=', id)
              .executeTakeFirstOrThrow()
          ).status,
          'partial',
        );
      } finally {
        await cutOff.outage.restore();
      }
      await completed;
      const final = recorder.envelopes.at(-1)!;
      assert.equal(final.operation, 'complete');
      assert.equal(recorder.textOf(final), 'Hello, world');
      const sequences = recorder.envelopes.map((e) => e.sequence);
      assert.deepEqual(
        sequences,
        [...sequences].sort((a, b) => a - b),
        'every envelope passes the ordering rule',
      );
      for (const e of recorder.envelopes)
        assert.ok('Hello, world'.startsWith(recorder.textOf(e)), 'the complete begins with every text shown');
      const row = await server.ctx.store.db
        .selectFrom('messages')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'complete');
      assert.equal(row.sequence, final.sequence);
      assert.match(row.blocks, /Hello, world/);
    });

    it('gives up once the store stayed away past its wait: ReplyNotStored, nothing more published, the message left partial', async () => {
      const store = new MessageStore(cutOff.store, server.ctx.events);
      const recorder = new Recorder();
      const s = stream(store, recorder, { deps: { storeWaitMs: 600 } });
      const { id } = await s.start();
      s.append('Half an answer');
      await nextTurn();
      await cutOff.outage.cut();
      try {
        await assert.rejects(s.complete(), ReplyNotStored);
        const published = recorder.envelopes.length;
        await assert.rejects(s.complete({ code: 'responder_failed', message: 'x' }), ReplyNotStored);
        assert.equal(recorder.envelopes.length, published, 'nothing more once given up');
      } finally {
        await cutOff.outage.restore();
      }
      assert.ok(recorder.envelopes.every((e) => e.operation === 'replace'));
      const row = await store.find(id);
      assert.equal(row?.status, 'partial', 'left to a takeover');
    });

    it('holds no backlog for a slow broker: the newest partial replaces one not yet published (bounded memory)', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const recorder = new Recorder();
      const slow: Broadcaster = {
        async publish(channel, envelope, options) {
          if (envelope.sequence > 1) await held;
          await recorder.publish(channel, envelope, options);
        },
      };
      const s = stream(store, slow);
      await s.start();
      for (let i = 0; i < 500; i++) {
        s.append(`w${i} `);
        await nextTurn();
      }
      release();
      await s.complete();
      const sequences = recorder.envelopes.map((e) => e.sequence);
      assert.deepEqual(
        sequences,
        [1, 2, 3, 4],
        'typing, the partial in flight, the newest partial, the complete',
      );
      assert.equal(recorder.textOf(recorder.envelopes.at(-2)!), recorder.textOf(recorder.envelopes.at(-1)!));
    });

    it('a stream whose message another node completed stops: no late partial, no second complete', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      const recorder = new Recorder();
      let superseded = 0;
      const s = stream(store, recorder, { onSuperseded: () => superseded++ });
      const { id } = await s.start();
      s.append('Hello');
      await s.idle();
      assert.equal(recorder.envelopes.length, 2, 'typing and one partial');
      await store.completeAbandoned(id, (blocks) => blocks, sequenceAfter);
      const before = recorder.envelopes.length;
      await s.complete();
      assert.equal(
        recorder.envelopes.length,
        before,
        'the complete of the superseded stream is not announced',
      );
      assert.equal(superseded, 1);
      assert.equal(s.superseded, true);
      const stored = await store.find(id);
      assert.equal(stored?.status, 'complete');
    });
    it('records every text before it is shown: each partial finds its text (or a longer one) recorded in Redis', async () => {
      const { redis, ready } = connectFailFastRedis(testRedisUrl());
      await ready;
      try {
        const shown = new RedisShownTexts(redis, { prefix: `t${randomUUID()}:` });
        const store = new MessageStore(server.ctx.store, server.ctx.events);
        const checked: string[] = [];
        // At the moment of each publication the record is already there, as a takeover would read it.
        const recorder = new (class extends Recorder {
          override async publish(channel: string, envelope: MessageEnvelope, options: { history: boolean }) {
            const text = this.textOf(envelope);
            if (envelope.operation !== 'complete' && text.length > 0) {
              const recorded = (await shown.longest(envelope.message_snapshot.id)) ?? '';
              assert.ok(recorded.startsWith(text), `recorded ${JSON.stringify(recorded)} covers ${text}`);
              checked.push(text);
            }
            await super.publish(channel, envelope, options);
          }
        })();
        const s = stream(store, recorder, { deps: { shown } });
        const { id } = await s.start();
        for (const word of ['Shown ', 'words ', 'are ', 'kept.']) {
          s.append(word);
          await nextTurn();
        }
        await s.idle();
        assert.equal(await shown.longest(id), 'Shown words are kept.');
        await s.complete();
        assert.ok(checked.length >= 2, `partials with text were checked (${checked.length})`);
        await waitFor(
          'the record to be deleted once the reply is stored complete',
          async () => (await shown.longest(id)) === undefined,
        );
      } finally {
        redis.disconnect();
      }
    });

    it('publishes no partial whose text could not be recorded; the complete still carries every word', async () => {
      // Nothing listens on port 1: every record fails at once, as while Redis is unreachable.
      const { redis, ready } = connectFailFastRedis('redis://127.0.0.1:1');
      await ready;
      try {
        const shown = new RedisShownTexts(redis, { prefix: 'unreachable:' });
        const store = new MessageStore(server.ctx.store, server.ctx.events);
        const recorder = new Recorder();
        const s = stream(store, recorder, { deps: { shown } });
        const { id } = await s.start();
        for (const word of ['Not ', 'shown ', 'yet.']) {
          s.append(word);
          await nextTurn();
        }
        await s.idle();
        assert.deepEqual(
          recorder.envelopes.filter((e) => recorder.textOf(e).length > 0),
          [],
          'no text went out unrecorded',
        );
        const complete = await s.complete();
        assert.equal(recorder.textOf(recorder.envelopes.at(-1)!), 'Not shown yet.');
        assert.equal(complete.status, 'complete');
        assert.equal((await store.find(id))?.status, 'complete');
      } finally {
        redis.disconnect();
      }
    });
    it('a broker that refuses every partial costs one log line, not one per envelope', async () => {
      const lines: string[] = [];
      const logger = createLogger('warn', {
        write: (line: string) => void lines.push(JSON.parse(line).msg as string),
      });
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      const refusing = new (class extends Recorder {
        override async publish(channel: string, envelope: MessageEnvelope, options: { history: boolean }) {
          if (envelope.operation !== 'complete') throw new Error('broker unavailable');
          await super.publish(channel, envelope, options);
        }
      })();
      const s = stream(store, refusing, { deps: { logger } });
      await s.start();
      for (let i = 0; i < 30; i++) {
        s.append(`w${i} `);
        await nextTurn();
      }
      await s.complete();
      assert.equal(refusing.envelopes.length, 1, 'only the complete went out');
      assert.deepEqual(
        lines.filter((l) => l.startsWith('could not publish a partial snapshot')),
        ['could not publish a partial snapshot'],
      );
    });
  });
}
