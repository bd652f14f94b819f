import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../logging/logger.ts';
import { TEST_DATABASES } from '../../testing/databases.ts';
import { startTestServer, type TestServer } from '../../testing/test-server.ts';
import type { MessageEnvelope } from '../messages/message.ts';
import { MessageStore } from '../messages/message-store.ts';
import { type Broadcaster, PendingAnnouncements } from './broadcaster.ts';
import { ConversationsService } from './conversations.service.ts';
import { LiveSnapshots } from './live-snapshots.ts';
import { RESERVED_SEQUENCES, ReplyStream } from './reply-stream.ts';

class Recorder implements Broadcaster {
  readonly envelopes: Array<MessageEnvelope & { history: boolean }> = [];
  async publish(_channel: string, envelope: MessageEnvelope, options: { history: boolean }): Promise<void> {
    this.envelopes.push({ ...envelope, history: options.history });
  }
}

for (const database of TEST_DATABASES) {
  describe(`reply stream sequences and history (${database})`, () => {
    let server: TestServer;
    let conversationId: string;
    let companyId: string;
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
    });
    after(() => server.close());

    function stream(store: MessageStore, broadcaster: Broadcaster, onSuperseded = () => {}) {
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
        },
        companyId,
        conversationId,
        { id: randomUUID(), name: 'Ava' },
        onSuperseded,
      );
    }

    it('puts only the complete in history, as the last and highest sequence', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      const recorder = new Recorder();
      const s = stream(store, recorder);
      const { id } = await s.start();
      for (const word of ['Hello ', 'there, ', 'visitor.']) {
        s.append(word);
        await new Promise((resolve) => setImmediate(resolve));
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
      assert.equal(completes[0]!.sequence, Math.max(...recorder.envelopes.map((e) => e.sequence)));
      assert.deepEqual(
        completes[0]!.message_snapshot.blocks.map((b) => (b as { content?: string }).content),
        ['Hello there, visitor.'],
      );
      const stored = await store.find(id);
      assert.equal(stored?.status, 'complete');
    });

    it('finishing for a dead node lands above every published sequence', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      const recorder = new Recorder();
      const s = stream(store, recorder);
      const { id } = await s.start();
      // Far past the first reservation, with no persist on schedule: the stream must reserve again on its own.
      for (let i = 0; i < RESERVED_SEQUENCES * 2 + 5; i++) {
        s.append(`w${i} `);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await s.idle();
      const published = Math.max(...recorder.envelopes.map((e) => e.sequence));
      assert.ok(published > RESERVED_SEQUENCES, `streamed past one reservation (${published})`);
      assert.ok(
        recorder.envelopes.every((e) => !e.history),
        'partials stay out of history',
      );
      // The node dies here. Another one completes the message from what the store says.
      const done = await store.completeAbandoned(id, (blocks) => blocks);
      assert.ok(done);
      assert.ok(done.sequence > published, `${done.sequence} > ${published}`);
      assert.equal(await store.completeAbandoned(id, (blocks) => blocks), undefined, 'only once');
    });

    it('never publishes past a reservation it could not write', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      store.persistPartial = async () => {
        throw new Error('connection terminated');
      };
      const recorder = new Recorder();
      const s = stream(store, recorder);
      await s.start();
      for (let i = 0; i < RESERVED_SEQUENCES + 20; i++) {
        s.append(`w${i} `);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await s.idle();
      assert.ok(recorder.envelopes.length > 1, 'partials within the first reservation were published');
      assert.equal(Math.max(...recorder.envelopes.map((e) => e.sequence)), 1 + RESERVED_SEQUENCES);
    });

    it('a stream whose message another node completed stops: no late partial, no second complete', async () => {
      const store = new MessageStore(server.ctx.store, server.ctx.events);
      const recorder = new Recorder();
      let superseded = 0;
      const s = stream(store, recorder, () => superseded++);
      const { id } = await s.start();
      s.append('Hello');
      await s.idle();
      assert.equal(recorder.envelopes.length, 2, 'typing and one partial');
      await store.completeAbandoned(id, (blocks) => blocks);
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
  });
}
