import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { BrokerError } from '@parley/realtime';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import type { DigitalEmployee } from '../../digital-employees/digital-employees.service.ts';
import { createResponder } from '../../digital-employees/responders/create-responder.ts';
import type { Responder } from '../../digital-employees/responders/responder.ts';
import { createLogger } from '../../logging/logger.ts';
import { clockMs } from '../../storage/db-clock.ts';
import type { MessageEnvelope, MessageRole } from '../messages/message.ts';
import { MessageStore } from '../messages/message-store.ts';
import type { Broadcaster } from './broadcaster.ts';
import { ConversationEngine } from './conversation-engine.ts';
import { ConversationsService } from './conversations.service.ts';
import { LiveSnapshots } from './live-snapshots.ts';
import { type ReplyJob, ReplyQueue } from './reply-queue.ts';
import { LOCAL_REPLY_SIGNALS } from './reply-signals.ts';

/** Records what the engine publishes; the first publication of role `failFirst` fails, as in a broker outage. */
class RecordingBroadcaster implements Broadcaster {
  readonly envelopes: MessageEnvelope[] = [];
  constructor(private failFirst?: MessageRole) {}

  async publish(_channel: string, envelope: MessageEnvelope): Promise<void> {
    if (envelope.message_snapshot.role === this.failFirst) {
      this.failFirst = undefined;
      throw new BrokerError('broker_unavailable', 'broker unavailable');
    }
    this.envelopes.push(envelope);
  }

  async waitFor(predicate: (envelopes: MessageEnvelope[]) => boolean): Promise<MessageEnvelope[]> {
    try {
      await waitFor('the envelopes', () => predicate(this.envelopes), 15_000, 10);
    } catch {
      assert.fail(`got ${JSON.stringify(this.envelopes.map((e) => e.operation))}`);
    }
    return this.envelopes;
  }
}

const replyCompleted = (envelopes: MessageEnvelope[]) =>
  envelopes.find((e) => e.message_snapshot.role === 'digital_employee' && e.operation === 'complete');

describe('conversation engine failure paths', () => {
  let server: TestServer;
  let conversations: ConversationsService;
  let store: MessageStore;
  before(async () => {
    server = await startTestServer();
    // The server's own conversation engine sweeps the same reply line for lapsed jobs: stopped, so that only the
    // engines made here take over a job (with a 300 ms lease, its sweep could take a test's job and announce the
    // reply through the server's realtime instead of the broadcaster recorded here).
    await server.ctx.webchat.drain(0);
    conversations = new ConversationsService(server.ctx.store.db, server.ctx.events);
    store = new MessageStore(server.ctx.store, server.ctx.events);
  });
  after(() => server.close());

  /** An engine on the test server's database publishing to `broadcaster`; `responder` replaces the builtin. */
  async function engineWith(
    broadcaster: Broadcaster,
    options: {
      responder?: Responder;
      messages?: MessageStore;
      leaseMs?: number;
      responderTimeoutMs?: number;
      /** Runs as the engine looks up the digital employee (before it stores a visitor message). */
      onLookup?: () => void;
    } = {},
  ) {
    const { responder, messages = store, leaseMs = 5_000 } = options;
    const company = await server.ctx.companies.create(`Engine ${randomUUID().slice(0, 8)}`);
    const employee = await server.ctx.digitalEmployees.create({
      companyId: company.id,
      name: 'Quick',
      responder: 'builtin',
      settings: { fallback: 'A quick answer.', word_delay_ms: 0 },
      isDefault: true,
    });
    const engine = new ConversationEngine({
      conversations,
      store: messages,
      broadcaster,
      live: new LiveSnapshots(),
      replies: {
        findEmployee: (companyId, id) => {
          options.onLookup?.();
          return server.ctx.digitalEmployees.find(companyId, id);
        },
        responderFor: (e: DigitalEmployee) =>
          responder ?? createResponder(e, { connectors: server.ctx.connectorCaller }),
        greetingFor: () => null,
      },
      logger: createLogger('silent'),
      flushIntervalMs: 0,
      persistIntervalMs: 0,
      responderTimeoutMs: options.responderTimeoutMs ?? 5_000,
      queue: new ReplyQueue(server.ctx.store, { nodeId: randomUUID(), leaseMs, stallMs: leaseMs }),
      signals: LOCAL_REPLY_SIGNALS,
      leaseMs,
    });
    const conversation = await conversations.create(
      { companyId: company.id, sessionId: randomUUID() },
      employee.id,
    );
    return { engine, conversation };
  }

  const send = (content: string, clientMessageId = randomUUID()) => ({
    version: 1 as const,
    client_message_id: clientMessageId,
    blocks: [{ type: 'markdown' as const, content }],
  });

  it('answers a stored message whose broadcast failed; the retry is a duplicate and gets no second reply', async () => {
    const broadcaster = new RecordingBroadcaster('user');
    const { engine, conversation } = await engineWith(broadcaster);
    try {
      const message = send('hello');
      await assert.rejects(engine.postUserMessage(conversation, message), /broker unavailable/);
      const retry = await engine.postUserMessage(conversation, message);
      assert.equal(retry.duplicate, true);
      const reply = replyCompleted(await broadcaster.waitFor((e) => replyCompleted(e) !== undefined));
      assert.equal(reply!.message_snapshot.blocks[0]!.type, 'markdown');
      await engine.shutdown(); // waits for every queued reply, so a second one would be in the log now
      const answers = broadcaster.envelopes.filter((e) => e.message_snapshot.role === 'digital_employee');
      assert.equal(new Set(answers.map((e) => e.message_snapshot.id)).size, 1, 'one reply');
    } finally {
      await engine.shutdown();
    }
  });

  it('completes a reply whose typing envelope could not be published, instead of leaving it partial', async () => {
    const broadcaster = new RecordingBroadcaster('digital_employee');
    const { engine, conversation } = await engineWith(broadcaster);
    try {
      await engine.postUserMessage(conversation, send('hello'));
      const reply = replyCompleted(await broadcaster.waitFor((e) => replyCompleted(e) !== undefined))!;
      assert.equal(reply.message_snapshot.blocks.at(-1)!.type, 'markdown');
      const { messages } = await store.page(conversation.id, {});
      assert.equal(messages.find((m) => m.id === reply.message_snapshot.id)?.status, 'complete');
    } finally {
      await engine.shutdown();
    }
  });

  it('shows an unexpected failure to the visitor as responder_failed, never as its own code', async () => {
    const broadcaster = new RecordingBroadcaster();
    const failing: Responder = {
      historyLimit: 0,
      // biome-ignore lint/correctness/useYield: fails before its first delta
      async *respond() {
        throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
      },
    };
    const { engine, conversation } = await engineWith(broadcaster, { responder: failing });
    try {
      await engine.postUserMessage(conversation, send('hello'));
      const reply = replyCompleted(await broadcaster.waitFor((e) => replyCompleted(e) !== undefined))!;
      const error = reply.message_snapshot.blocks.at(-1)!;
      assert.equal(error.type, 'error');
      assert.equal((error as { code: string }).code, 'responder_failed');
    } finally {
      await engine.shutdown();
    }
  });

  it('ends a reply at its time-out even when the responder ignores the signal and never yields again', async () => {
    const broadcaster = new RecordingBroadcaster();
    let stuck = false;
    const ignoring: Responder = {
      historyLimit: 0,
      async *respond() {
        yield 'first words ';
        stuck = true;
        await new Promise(() => {}); // awaits something that ignores the signal, forever
      },
    };
    const { engine, conversation } = await engineWith(broadcaster, {
      responder: ignoring,
      responderTimeoutMs: 300,
    });
    try {
      await engine.postUserMessage(conversation, send('hello'));
      const reply = replyCompleted(await broadcaster.waitFor((e) => replyCompleted(e) !== undefined))!;
      assert.ok(stuck, 'the responder was stuck when the reply ended');
      const blocks = reply.message_snapshot.blocks;
      assert.equal((blocks.at(-1) as { code: string }).code, 'responder_timeout');
      assert.match(
        (blocks[0] as { content: string }).content,
        /^first words/,
        'what streamed before is kept',
      );
    } finally {
      await engine.shutdown();
    }
  });

  it('retries a completion whose write failed, so the reply ends complete (with its error) instead of partial', async () => {
    const broadcaster = new RecordingBroadcaster();
    // The real store, whose first write of a complete snapshot fails, as in a database hiccup.
    let failures = 1;
    const flaky = new MessageStore(server.ctx.store, server.ctx.events);
    const complete = flaky.complete.bind(flaky);
    flaky.complete = async (snapshot, sequence, companyId) => {
      if (failures-- > 0) throw new Error('database is locked');
      return complete(snapshot, sequence, companyId);
    };
    const { engine, conversation } = await engineWith(broadcaster, { messages: flaky });
    try {
      await engine.postUserMessage(conversation, send('hello'));
      const reply = replyCompleted(await broadcaster.waitFor((e) => replyCompleted(e) !== undefined))!;
      assert.equal((reply.message_snapshot.blocks.at(-1) as { code: string }).code, 'responder_failed');
      const { messages } = await store.page(conversation.id, {});
      const stored = messages.find((m) => m.id === reply.message_snapshot.id);
      assert.equal(stored?.status, 'complete');
    } finally {
      await engine.shutdown();
    }
  });

  /** A responder that answers `text` once `release()` is called, and ends (aborted) when its signal fires. */
  function heldResponder(text: string) {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const responder: Responder = {
      historyLimit: 0,
      async *respond({ signal }) {
        await Promise.race([
          released,
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
        ]);
        yield text;
      },
    };
    return { responder, release: () => release() };
  }

  const jobsOf = (conversationId: string) =>
    server.ctx.store.db
      .selectFrom('reply_jobs')
      .select(['message_id', 'state', 'reply_message_id'])
      .where('conversation_id', '=', conversationId)
      .orderBy('position')
      .execute();

  it("stores the reply's start with the message when the line is empty; behind a running reply, a message waits", async () => {
    const broadcaster = new RecordingBroadcaster();
    const held = heldResponder('Answered.');
    const { engine, conversation } = await engineWith(broadcaster, { responder: held.responder });
    try {
      const first = await engine.postUserMessage(conversation, send('first'));
      // Read before the reply has had a turn to run: the message's own transaction wrote all of this.
      const { messages } = await store.page(conversation.id, {});
      const reply = messages.find((m) => m.role === 'digital_employee');
      assert.equal(reply?.status, 'partial');
      assert.equal(reply?.position, first.snapshot.position + 1, 'right after the message it answers');
      assert.deepEqual(
        reply?.blocks.map((b) => b.type),
        ['typing'],
      );
      assert.deepEqual(await jobsOf(conversation.id), [
        { message_id: first.snapshot.id, state: 'running', reply_message_id: reply!.id },
      ]);
      await broadcaster.waitFor((e) => e.some((x) => x.message_snapshot.id === reply!.id));
      const second = await engine.postUserMessage(conversation, send('second'));
      const jobs = await jobsOf(conversation.id);
      assert.deepEqual(jobs[1], { message_id: second.snapshot.id, state: 'queued', reply_message_id: null });
      assert.equal(
        (await store.page(conversation.id, {})).messages.filter((m) => m.role === 'digital_employee').length,
        1,
        'no second reply started while the first runs',
      );
      held.release();
      await broadcaster.waitFor((e) => e.filter((x) => x === replyCompleted([x])).length === 2);
      const completes = broadcaster.envelopes.filter((e) => replyCompleted([e]));
      assert.equal(completes[0]!.message_snapshot.id, reply!.id);
      assert.ok(completes[1]!.message_snapshot.position > second.snapshot.position, 'answered in order');
      await engine.shutdown();
      assert.deepEqual(await jobsOf(conversation.id), [], 'both jobs left the line');
    } finally {
      await engine.shutdown();
    }
  });

  it('a reply stored with its message can be stopped at once, even while the message is still being announced', async () => {
    let announced!: () => void;
    const announcing = new Promise<void>((resolve) => {
      announced = resolve;
    });
    const recorder = new RecordingBroadcaster();
    // The user message's broadcast hangs (a slow broker) until the test lets it through.
    const broadcaster: Broadcaster = {
      publish: async (channel, envelope) => {
        if (envelope.message_snapshot.role === 'user') await announcing;
        await recorder.publish(channel, envelope);
      },
    };
    const held = heldResponder('Never shown.');
    const { engine, conversation } = await engineWith(broadcaster, { responder: held.responder });
    try {
      const posting = engine.postUserMessage(conversation, send('hello'));
      await waitFor(
        'the reply job stored',
        async () => (await jobsOf(conversation.id)).length > 0,
        15_000,
        5,
      );
      // Stored with its reply's start, not yet announced: a handover now must still stop that reply.
      engine.stopReply(conversation.id, 'handover');
      announced();
      await posting;
      const reply = replyCompleted(await recorder.waitFor((e) => replyCompleted(e) !== undefined))!;
      assert.equal((reply.message_snapshot.blocks.at(-1) as { code: string }).code, 'reply_interrupted');
    } finally {
      held.release();
      await engine.shutdown();
    }
  });

  it('keeps renewing the lease of a job claimed with its message while the message is still being announced', async () => {
    let announced!: () => void;
    const announcing = new Promise<void>((resolve) => {
      announced = resolve;
    });
    const recorder = new RecordingBroadcaster();
    // The broker holds the user message until the first lease is long past; the node must not take its own job over.
    const broadcaster: Broadcaster = {
      publish: async (channel, envelope) => {
        if (envelope.message_snapshot.role === 'user') await announcing;
        await recorder.publish(channel, envelope);
      },
    };
    const leaseMs = 300;
    const { engine, conversation } = await engineWith(broadcaster, { leaseMs });
    await engine.start({ alone: false }); // renews leases and sweeps for lapsed ones, as a node does
    try {
      const posting = engine.postUserMessage(conversation, send('hello'));
      // Leases are compared with the store's clock (storage/db-clock.ts), so that is the clock waited on.
      const lease = async () =>
        server.ctx.store.db
          .selectFrom('reply_jobs')
          .select(['lease_expires_at', clockMs(server.ctx.store.dialect).as('now')])
          .where('conversation_id', '=', conversation.id)
          .executeTakeFirst();
      const first = await waitFor(
        'the job claimed with its message',
        async () => (await lease())?.lease_expires_at,
      );
      await waitFor('the store’s clock two leases past the first lease', async () => {
        const row = await lease();
        return row !== undefined && Number(row.now) > Number(first) + 2 * leaseMs;
      });
      announced();
      await posting;
      const reply = replyCompleted(await recorder.waitFor((e) => replyCompleted(e) !== undefined))!;
      assert.equal(reply.message_snapshot.blocks.at(-1)!.type, 'markdown', 'answered, not taken over');
      const replies = new Set(
        recorder.envelopes
          .filter((e) => e.message_snapshot.role === 'digital_employee')
          .map((e) => e.message_snapshot.id),
      );
      assert.equal(replies.size, 1);
      assert.equal(
        recorder.envelopes[0]!.message_snapshot.role,
        'user',
        'the message is announced before its reply',
      );
    } finally {
      await engine.shutdown();
    }
  });

  it('an interrupt that arrives while a message is stored with its reply, before that reply is registered, stops it', async () => {
    const broadcaster = new RecordingBroadcaster();
    const held = heldResponder('Never shown.');
    let engine!: ConversationEngine;
    let conversationId = '';
    // Another node's handover signal handled here before this node has registered the reply it just stored.
    let interrupt = false;
    const built = await engineWith(broadcaster, {
      responder: held.responder,
      onLookup: () => {
        if (interrupt) engine.stopReply(conversationId, 'handover');
      },
    });
    engine = built.engine;
    conversationId = built.conversation.id;
    try {
      interrupt = true;
      await engine.postUserMessage(built.conversation, send('hello'));
      const reply = replyCompleted(await broadcaster.waitFor((e) => replyCompleted(e) !== undefined))!;
      assert.equal((reply.message_snapshot.blocks.at(-1) as { code: string }).code, 'reply_interrupted');
    } finally {
      held.release();
      await engine.shutdown();
    }
  });

  it('a node that stored a complete and died before announcing it: the takeover announces the stored complete', async () => {
    const broadcaster = new RecordingBroadcaster();
    const { engine, conversation } = await engineWith(broadcaster, { leaseMs: 300 });
    // The dead node: it claimed the job with the message, streamed, stored the complete — and was killed before
    // its `complete` envelope went out or its job left the line.
    const dead = new ReplyQueue(server.ctx.store, { nodeId: randomUUID(), leaseMs: 300, stallMs: 300 });
    let job!: ReplyJob;
    await store.insertAt(
      { conversationId: conversation.id, role: 'user', author: null, status: 'complete', blocks: [] },
      async (trx, at) => {
        job = (await dead.enqueue(
          trx,
          { messageId: at.id, conversationId: conversation.id, position: at.position },
          { replyMessageId: null },
        ))!;
      },
    );
    const { snapshot: reply } = await store.insertAt(
      {
        conversationId: conversation.id,
        role: 'digital_employee',
        author: null,
        status: 'partial',
        blocks: [],
      },
      (trx, at) => dead.attachReply(trx, job, at.id),
    );
    const final = {
      ...reply,
      status: 'complete' as const,
      blocks: [{ id: randomUUID(), type: 'markdown' as const, content: 'Stored, never announced.' }],
    };
    assert.equal(await store.complete(final, 9), true);
    try {
      await engine.start({ alone: false });
      const announced = replyCompleted(
        await broadcaster.waitFor((e) => replyCompleted(e)?.message_snapshot.id === reply.id),
      )!;
      assert.equal(announced.sequence, 9, 'the sequence it was stored with');
      assert.deepEqual(announced.message_snapshot.blocks, final.blocks, 'as stored: no error block added');
    } finally {
      await engine.shutdown();
    }
  });
});
