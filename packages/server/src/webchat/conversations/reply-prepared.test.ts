import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { conversationWith } from '@parley/testing/digital-employees/responder-fixtures';
import { collect } from '@parley/testing/digital-employees/test-messages';
import { RETURNS_ARTICLE } from '@parley/testing/knowledge/knowledge-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { BuiltinResponder } from '../../digital-employees/responders/builtin.responder.ts';
import { createResponder } from '../../digital-employees/responders/create-responder.ts';
import type { KnowledgeSearch } from '../../knowledge/knowledge-search.ts';
import { createLogger } from '../../logging/logger.ts';
import type { MessageEnvelope } from '../messages/message.ts';
import { type AlsoInTransaction, MessageStore } from '../messages/message-store.ts';
import type { Broadcaster } from './broadcaster.ts';
import { ConversationEngine } from './conversation-engine.ts';
import { ConversationsService } from './conversations.service.ts';
import { LiveSnapshots } from './live-snapshots.ts';
import { ReplyQueue } from './reply-queue.ts';
import { LOCAL_REPLY_SIGNALS } from './reply-signals.ts';

/** The company's real knowledge, each consultation recorded in `events` as it is asked. */
function recorded(knowledge: KnowledgeSearch, events: string[]): KnowledgeSearch {
  return {
    get relevanceThreshold() {
      return knowledge.relevanceThreshold;
    },
    hasSources: (companyId) => {
      events.push('knowledge consulted');
      return knowledge.hasSources(companyId);
    },
    search: (companyId, query, options) => {
      events.push(`searched: ${query}`);
      return knowledge.search(companyId, query, options);
    },
  };
}

/** The real message store, recording when a visitor's message begins to be stored and when it is. */
class RecordedMessages extends MessageStore {
  constructor(
    server: TestServer,
    private readonly log: string[],
  ) {
    super(server.ctx.store, server.ctx.events);
  }

  override async insertAt(input: Parameters<MessageStore['insertAt']>[0], also?: AlsoInTransaction) {
    if (input.role === 'user') this.log.push('storing the message');
    const inserted = await super.insertAt(input, also);
    if (input.role === 'user') this.log.push('message stored');
    return inserted;
  }
}

class Envelopes implements Broadcaster {
  readonly envelopes: MessageEnvelope[] = [];
  async publish(_channel: string, envelope: MessageEnvelope): Promise<void> {
    this.envelopes.push(envelope);
  }
}

const QUESTION = 'How many days do I have to return a book?';

// The builtin's answer needs the question, not the stored message: on PostgreSQL its knowledge search starts before
// the message's transaction (its statements run beside the transaction's on other pooled connections) and the reply
// uses that search; on SQLite, whose statements run one at a time in-process, it starts after the message is stored
// (packages/server/src/webchat/conversations/conversation-intake.ts `prepared`). Shown by the order of events.
for (const database of TEST_DATABASES) {
  describe(`a builtin reply's knowledge search and the message it answers (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create(`Prepared ${randomUUID().slice(0, 6)}`)).id;
      await server.ctx.knowledge.create(
        companyId,
        { kind: 'text', title: 'Returns and refunds', content: RETURNS_ARTICLE },
        { actor: 'test' },
      );
    });
    after(() => server.close());

    it(`searches ${database === 'postgres' ? 'while' : 'after'} the message is stored, once, and answers from it`, async () => {
      const events: string[] = [];
      const knowledge = recorded(server.ctx.knowledge, events);
      const messages = new RecordedMessages(server, events);
      const conversations = new ConversationsService(server.ctx.store.db, server.ctx.events);
      const employee = await server.ctx.digitalEmployees.create({
        companyId,
        name: 'Builtin',
        responder: 'builtin',
        settings: { word_delay_ms: 0 },
        isDefault: false,
      });
      const broadcaster = new Envelopes();
      const engine = new ConversationEngine({
        conversations,
        store: messages,
        broadcaster,
        live: new LiveSnapshots(),
        replies: {
          findEmployee: (company, id) => server.ctx.digitalEmployees.find(company, id),
          responderFor: (e) => createResponder(e, { connectors: server.ctx.connectorCaller, knowledge }),
          greetingFor: () => null,
        },
        logger: createLogger('silent'),
        flushIntervalMs: 0,
        persistIntervalMs: 0,
        responderTimeoutMs: 10_000,
        queue: new ReplyQueue(server.ctx.store, { nodeId: randomUUID(), leaseMs: 5_000, stallMs: 5_000 }),
        signals: LOCAL_REPLY_SIGNALS,
        leaseMs: 5_000,
      });
      try {
        const conversation = await conversations.create({ companyId, sessionId: randomUUID() }, employee.id);
        await engine.postUserMessage(conversation, {
          version: 1,
          client_message_id: randomUUID(),
          blocks: [{ type: 'markdown', content: QUESTION }],
        });
        const reply = await waitFor('the reply', () =>
          broadcaster.envelopes.find(
            (e) => e.message_snapshot.role === 'digital_employee' && e.operation === 'complete',
          ),
        );
        const markdown = reply.message_snapshot.blocks[0] as { type: string; content: string };
        assert.match(markdown.content, /within 30 days/);
      } finally {
        await engine.shutdown();
      }
      const searched = `searched: ${QUESTION}`;
      assert.equal(events.filter((e) => e === searched).length, 1, 'one search');
      if (database === 'postgres') {
        // Consulted before the message's transaction began; its search then runs beside that transaction and may
        // begin before or after the commit (two connections), so only its count is fixed.
        assert.deepEqual(
          events.filter((e) => e !== searched),
          ['knowledge consulted', 'storing the message', 'message stored'],
        );
      } else {
        assert.deepEqual(events, ['storing the message', 'message stored', 'knowledge consulted', searched]);
      }
    });

    it('searches afresh when asked about another text than the one it was prepared for', async () => {
      const events: string[] = [];
      const employee = await server.ctx.digitalEmployees.create({
        companyId,
        name: 'Builtin',
        responder: 'builtin',
        settings: { word_delay_ms: 0 },
        isDefault: false,
      });
      const responder = new BuiltinResponder(employee, recorded(server.ctx.knowledge, events));
      const prepared = conversationWith(
        companyId,
        [],
        'Can I pay with cryptocurrency?',
        new AbortController().signal,
      );
      responder.prepare({ companyId, message: prepared.message });
      const asked = conversationWith(companyId, [], QUESTION, new AbortController().signal);
      const chunks = await collect(responder.respond({ ...asked, digitalEmployee: employee }));
      const text = chunks.filter((c) => typeof c === 'string').join('');
      assert.match(text, /within 30 days/);
      // Both searches run (the prepared one may still be under way on PostgreSQL when the fresh one starts).
      assert.deepEqual(events.filter((e) => e.startsWith('searched')).sort(), [
        'searched: Can I pay with cryptocurrency?',
        `searched: ${QUESTION}`,
      ]);
    });
  });
}
