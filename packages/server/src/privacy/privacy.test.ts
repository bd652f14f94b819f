import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { TEST_DATABASES, testPostgresUrl } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { createTestClient, fetchToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { download, fileForm, sdkUpload } from '@parley/testing/webchat/attachment-fixtures';
import {
  connectToNewConversation,
  digitalEmployeeCompletes,
  newVisitor,
  sdkGet,
  sdkPost,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { startWebhookSink, type WebhookSink } from '@parley/testing/webhooks/webhook-sink';
import { channelOf } from '@parley/webchat-protocol';
import SQLite from 'better-sqlite3';
import { RetentionSweeper } from './retention.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

// Erasure, export and retention (docs/privacy.md) on both stores, each with both brokers: the realtime history a
// canary must leave lives in the memory broker or in Redis, whichever store holds the rows.
const SETUPS = TEST_DATABASES.flatMap((database) => [
  { database, redis: false },
  { database, redis: true },
]);

for (const { database, redis } of SETUPS) {
  describe(`privacy (${database}, ${redis ? 'redis' : 'memory'} broker)`, () => {
    let server: TestServer;
    let sink: WebhookSink;
    let companyId: string;
    let auth: Record<string, string>;
    before(async () => {
      server = await startTestServer({
        database,
        redis,
        // The second removal of an erasure's realtime history comes 5 s after it: a late publish within that window is
        // what one test makes, and a loaded machine must not take longer than the window between its two steps.
        config: { webchat: { streamFlushIntervalMs: 0, erasureLatePublishMs: 5_000 } },
      });
      sink = await startWebhookSink();
      // The receiver fails every attempt, so deliveries stay pending: an erasure must keep them from any retry.
      sink.answer = () => 500;
      const client = await createTestClient(server.ctx, [
        'privacy:write',
        'webhooks:write',
        'conversations:read',
        'conversations:write',
      ]);
      companyId = client.companyId;
      auth = { authorization: `Bearer ${await fetchToken(server, client)}` };
      const hook = await http(`${server.baseUrl}/platform/v1/webhooks`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          url: sink.url,
          events: ['message.created', 'conversation.created', 'visitor.erased'],
        }),
      });
      assert.equal(hook.status, 201, hook.text);
    });
    after(async () => {
      await server.close();
      await sink.close();
    });

    const post = (path: string, body: unknown, headers = auth) =>
      http(`${server.baseUrl}/platform/v1/privacy${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    const pendingDeliveries = async (company: string): Promise<number> =>
      (
        await server.ctx.store.db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('company_id', '=', company)
          .where('status', '=', 'pending')
          .execute()
      ).length;

    /** `count` old messages of a conversation, written as rows in a few statements (a long history, quickly). */
    const seedMessages = async (conversationId: string, count: number): Promise<void> => {
      const at = new Date().toISOString();
      const rows = Array.from({ length: count }, (_, i) => ({
        id: randomUUID(),
        conversation_id: conversationId,
        position: i + 1,
        role: i % 2 ? 'digital_employee' : 'user',
        author_id: null,
        author_name: null,
        status: 'complete',
        blocks: JSON.stringify([{ id: randomUUID(), type: 'markdown', content: `old message ${i}` }]),
        client_message_id: null,
        sequence: 1,
        created_at: at,
        updated_at: at,
        note_meta: null,
      }));
      const db = server.ctx.store.db;
      for (let i = 0; i < rows.length; i += 200)
        await db
          .insertInto('messages')
          .values(rows.slice(i, i + 200))
          .execute();
      await db
        .updateTable('conversations')
        .set({ last_position: count })
        .where('id', '=', conversationId)
        .execute();
    };

    /** Every stored byte that could still hold `canary`: a pg_dump of the schema, or the SQLite file after a checkpoint. */
    const dumpContains = (canary: string): boolean => {
      if (database === 'postgres') {
        const dump = execFileSync('pg_dump', ['--schema', server.schema!, '--data-only', testPostgresUrl()], {
          maxBuffer: 256 * 1024 * 1024,
        });
        return dump.includes(canary);
      }
      const file = join(server.dataDir, 'parley.db');
      const side = new SQLite(file);
      try {
        side.pragma('wal_checkpoint(TRUNCATE)');
      } finally {
        side.close();
      }
      const bytes = Buffer.concat([readFileSync(file), readFileSyncOrEmpty(`${file}-wal`)]);
      return bytes.includes(Buffer.from(canary));
    };

    it('erases a session: messages, search, attachments and blobs, feedback, outbox, realtime history; disconnects it', async (t) => {
      const canary = `canary-${randomUUID()}`;
      const v = newVisitor(companyId);
      const { conversation, c } = await connectToNewConversation(server, v);
      t.after(() => c.close());
      let disconnected = false;
      c.client.on('disconnected', () => {
        disconnected = true;
      });
      await sendMessage(c.sub, `my card is ${canary}`);
      await c.log.waitFor((envelopes) => digitalEmployeeCompletes(envelopes).length >= 1);
      const upload = await sdkUpload(
        server,
        v,
        conversation.id,
        fileForm(Buffer.from(`file ${canary}\n`), 'note.txt', 'text/plain'),
      );
      assert.equal(upload.status, 201, upload.text);
      await c.sub.publish({
        version: 1,
        client_message_id: randomUUID(),
        blocks: [{ type: 'attachment', attachment_id: upload.body.id }],
      });
      await c.log.waitFor((envelopes) => digitalEmployeeCompletes(envelopes).length >= 2);
      // An internal note about the visitor (any message role is erased with its conversation).
      await server.ctx.webchat.notes.addNote(companyId, conversation.id, {
        text: `agent note: ${canary}`,
        author: { type: 'system', id: 'privacy-test', name: 'Test' },
      });
      const listed = await sdkGet(server, v, `/conversations/${conversation.id}/messages`);
      const firstReply = listed.body.messages.find(
        (m: { role: string; status: string }) => m.role === 'digital_employee' && m.status === 'complete',
      );
      const rated = await http(
        `${server.baseUrl}/sdk/v1/conversations/${conversation.id}/messages/${firstReply.id}/feedback`,
        {
          method: 'PUT',
          headers: { ...v.headers, 'content-type': 'application/json' },
          body: JSON.stringify({ rating: 'down', comment: `bad ${canary}` }),
        },
      );
      assert.ok(rated.status < 300, rated.text);
      const read = await sdkPost(server, v, `/conversations/${conversation.id}/read`, {
        message_id: firstReply.id,
      });
      assert.ok(read.status < 300, read.text);
      // An agent's answer posted under an Idempotency-Key: its stored answer quotes the message for 24 h.
      const answered = await http(`${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify({ blocks: [{ type: 'markdown', content: `we got ${canary}` }] }),
      });
      assert.equal(answered.status, 201, answered.text);
      // A closed conversation takes the visitor's CSAT, with a comment.
      const closed = await http(`${server.baseUrl}/platform/v1/conversations/${conversation.id}/close`, {
        method: 'POST',
        headers: auth,
      });
      assert.ok(closed.status < 300, closed.text);
      const csat = await http(`${server.baseUrl}/sdk/v1/conversations/${conversation.id}/csat`, {
        method: 'PUT',
        headers: { ...v.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ score: 2, comment: `slow ${canary}` }),
      });
      assert.ok(csat.status < 300, csat.text);
      // The agent's answer handed the conversation to a person, whose summary note is written in the background:
      // counted once it is there (an erasure before it would count one message more than the rows read below).
      await waitFor('the hand-over summary note', () =>
        server.ctx.webchat.store.latestNoteOfKind(conversation.id, 'handover_summary'),
      );
      // Preconditions: the canary is really stored, searchable, in history and in the outbox.
      const db = server.ctx.store.db;
      const messages = await db
        .selectFrom('messages')
        .select('id')
        .where('conversation_id', '=', conversation.id)
        .execute();
      const deliveries = await db
        .selectFrom('webhook_deliveries')
        .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
        .select('webhook_deliveries.id')
        .where('webhook_events.conversation_id', '=', conversation.id)
        .execute();
      assert.ok(deliveries.length >= 2, 'deliveries about the conversation are pending');
      const events = await db
        .selectFrom('webhook_events')
        .select('id')
        .where('conversation_id', '=', conversation.id)
        .execute();
      const hits = await server.ctx.webchat.search.search(companyId, canary, { limit: 10 });
      assert.equal(hits.length, 1, 'searchable before');
      const history = await server.ctx.webchat.realtime.history(channelOf(companyId, conversation.id), {
        limit: -1,
      });
      assert.ok(JSON.stringify(history.publications).includes(canary), 'in realtime history before');
      assert.ok(dumpContains(canary), 'the dump holds the canary before');

      const res = await post('/erasures', { session_id: v.sessionId });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.erased.conversations, 1);
      assert.equal(res.body.erased.messages, messages.length);
      assert.equal(res.body.erased.attachments, 1);
      assert.equal(res.body.erased.attachment_blobs, 1);
      assert.equal(res.body.erased.webhook_deliveries, deliveries.length);
      assert.equal(res.body.erased.feedback, 1);
      assert.equal(res.body.erased.csat, 1);
      assert.equal(res.body.erased.read_marks, 1, "the visitor's read mark");
      assert.equal(res.body.erased.webhook_events, events.length);
      assert.equal(res.body.erased.idempotency_keys, 1, "the agent's stored answer");
      assert.equal(res.body.erased.realtime_histories, 1);
      assert.match(res.body.id, /^[0-9a-f-]{36}$/);

      // Nothing answers with it any more: REST, search, realtime history, export, the outbox, the dumps.
      assert.equal((await sdkGet(server, v, `/conversations/${conversation.id}/messages`)).status, 404);
      assert.equal((await server.ctx.webchat.search.search(companyId, canary, { limit: 10 })).length, 0);
      const after = await server.ctx.webchat.realtime.history(channelOf(companyId, conversation.id), {
        limit: -1,
      });
      assert.equal(after.publications.length, 0);
      // A client coming back asks for what followed its position (recovery): nothing is left to serve.
      const recovery = await server.ctx.webchat.realtime.history(channelOf(companyId, conversation.id), {
        since: { offset: 0, epoch: history.epoch },
        limit: -1,
      });
      assert.equal(recovery.publications.length, 0);
      const exported = await post('/exports', { session_id: v.sessionId });
      assert.equal(exported.status, 200);
      assert.ok(!exported.text.includes(canary));
      const outbox = await db.selectFrom('webhook_events').select('body').execute();
      assert.ok(outbox.every((row) => !row.body.includes(canary)));
      assert.ok(!dumpContains(canary), 'no dump holds the canary after');
      // Webhook retries: the receiver recovers and every pending delivery is due now; what is sent is delivered
      // (the `visitor.erased` event at least), and nothing sent after the erasure carries the canary.
      assert.ok(
        sink.received.some((r) => r.body.includes(canary)),
        'failed attempts carried it before',
      );
      const sentBefore = sink.received.length;
      sink.answer = () => 200;
      t.after(() => {
        sink.answer = () => 500;
      });
      await db
        .updateTable('webhook_deliveries')
        .set({ next_attempt_at: 0 })
        .where('company_id', '=', companyId)
        .where('status', '=', 'pending')
        .execute();
      await waitFor('the retries', async () => (await pendingDeliveries(companyId)) === 0);
      const retried = sink.received.slice(sentBefore);
      assert.ok(retried.length >= 1, 'the retries ran');
      assert.ok(
        retried.every((r) => !r.body.includes(canary)),
        'no retry carries the canary',
      );
      await waitFor('the live session is disconnected', () => disconnected);
      c.close();
      // Kept for audit: the receipt, with ids and counts only.
      const audit = await server.ctx.audit.list({ companyId, type: 'visitor.erased' });
      assert.equal(audit.length >= 1, true);
      assert.ok(!JSON.stringify(audit).includes(canary));
    });

    it('removes the realtime history once more after an erasure, so a publish that reached the broker late is not kept', async () => {
      const employee = await server.ctx.webchat.conversations.defaultDigitalEmployee(companyId);
      const conversation = await server.ctx.webchat.conversations.create(
        { companyId, sessionId: randomUUID() },
        employee.id,
      );
      const res = await post('/erasures', { conversation_id: conversation.id });
      assert.equal(res.status, 200, res.text);
      // A message stored just before the erasure's lock, whose publish reaches the broker only now.
      const channel = channelOf(companyId, conversation.id);
      const canary = `canary-${randomUUID()}`;
      await server.ctx.webchat.realtime.publish({ channel, data: { text: canary } });
      const held = await server.ctx.webchat.realtime.history(channel, { limit: -1 });
      assert.equal(held.publications.length, 1, 'the late publication is in the history at first');
      await server.ctx.privacy.service.settled(); // the second removal has run
      const after = await server.ctx.webchat.realtime.history(channel, { limit: -1 });
      assert.equal(after.publications.length, 0, 'the second removal took the late publication');
    });

    it("erases the workspace's rows of the conversation: visitor attributes, labels, mentions of its notes", async () => {
      const canary = `canary-${randomUUID()}`;
      const v = newVisitor(companyId);
      const created = await sdkPost(server, v, '/conversations', {
        attributes: { order: canary, plan: 'gold' },
        page_url: `https://shop.example/${canary}`,
      });
      assert.equal(created.status, 201, created.text);
      const conversationId: string = created.body.id;
      const label = `label-${randomUUID().slice(0, 8)}`;
      await server.ctx.workspace.service.setLabels(companyId, conversationId, [label], { id: 'test' });
      const agent = await server.ctx.users.create({
        companyId,
        email: `agent-${randomUUID()}@example.com`,
        password: randomUUID(),
        role: 'agent',
        name: 'Kim',
      });
      await server.ctx.webchat.notes.addNote(companyId, conversationId, {
        text: `@Kim see order ${canary}`,
        author: { type: 'system', id: 'privacy-test', name: 'Test' },
        mentions: [agent.id],
      });
      const db = server.ctx.store.db;
      const rowsOf = async () => ({
        attributes: (
          await db
            .selectFrom('conversation_attributes')
            .selectAll()
            .where('conversation_id', '=', conversationId)
            .execute()
        ).length,
        labels: (
          await db
            .selectFrom('conversation_labels')
            .selectAll()
            .where('conversation_id', '=', conversationId)
            .execute()
        ).length,
        mentions: (await server.ctx.workspace.mentions.unread(companyId, agent.id)).length,
        companyLabels: (await server.ctx.workspace.service.companyLabels(companyId)).filter(
          (l) => l.label === label,
        ).length,
        // The inbox list's attribute filter (`attr.order=…`).
        filtered: (
          await server.ctx.workspace.service.list(
            companyId,
            { view: 'all', userId: agent.id, attributes: [['order', canary]] },
            { limit: 10 },
          )
        ).length,
      });
      // Preconditions: each kind is stored, and the canary is on disk (attribute rows, conversation JSON, preview).
      assert.deepEqual(await rowsOf(), {
        attributes: 2,
        labels: 1,
        mentions: 1,
        companyLabels: 1,
        filtered: 1,
      });
      assert.ok(dumpContains(canary), 'the dump holds the canary before');

      const res = await post('/erasures', { conversation_id: conversationId });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.erased.conversations, 1);

      assert.deepEqual(await rowsOf(), {
        attributes: 0,
        labels: 0,
        mentions: 0,
        companyLabels: 0,
        filtered: 0,
      });
      assert.ok(!dumpContains(canary), 'no dump holds the canary after');
    });

    it('erases every conversation of a visitor_sub, and only those; visitor.erased carries ids and counts', async () => {
      const sub = `crm-${randomUUID()}`;
      const canary = `canary-${randomUUID()}`;
      const seed = async (visitorSub: string, text: string) => {
        const employee = await server.ctx.webchat.conversations.defaultDigitalEmployee(companyId);
        const conversation = await server.ctx.webchat.conversations.create(
          { companyId, sessionId: randomUUID() },
          employee.id,
          {
            key: `visitor:${randomUUID()}`,
            id: visitorSub,
            channelId: randomUUID(),
            name: 'Zoë',
            email: 'z@example.org',
          },
        );
        for (const content of [text, `${text} again`])
          await server.ctx.webchat.store.insert({
            conversationId: conversation.id,
            role: 'user',
            author: null,
            status: 'complete',
            blocks: [{ id: randomUUID(), type: 'markdown', content }],
          });
        return conversation.id;
      };
      const mine = [await seed(sub, canary), await seed(sub, canary)];
      const other = await seed(`crm-${randomUUID()}`, 'someone else');
      const res = await post('/erasures', { visitor_sub: sub });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.erased.conversations, 2);
      assert.equal(res.body.erased.messages, 4);
      const left = await server.ctx.store.db
        .selectFrom('conversations')
        .select('id')
        .where('id', 'in', [...mine, other])
        .execute();
      assert.deepEqual(
        left.map((r) => r.id),
        [other],
      );
      assert.ok(!dumpContains(canary));
      await waitFor('the event', () =>
        sink.events('visitor.erased').some((e) => e.data.erasure_id === res.body.id),
      );
      const event = sink.events('visitor.erased').find((e) => e.data.erasure_id === res.body.id)!;
      assert.deepEqual([...(event.data.conversation_ids as string[])].sort(), [...mine].sort());
      assert.ok(!event.body.includes(canary) && !event.body.includes(sub), 'no personal data in the event');
    });

    it('erases a long history in statements that give the event loop back; a message arriving meanwhile is erased and counted, one after is refused', async () => {
      const canary = `canary-${randomUUID()}`;
      const db = server.ctx.store.db;
      const employee = await server.ctx.webchat.conversations.defaultDigitalEmployee(companyId);
      const conversation = await server.ctx.webchat.conversations.create(
        { companyId, sessionId: randomUUID() },
        employee.id,
      );
      const seeded = 2_000;
      await seedMessages(conversation.id, seeded);
      const messagesLeft = async () =>
        Number(
          (
            await db
              .selectFrom('messages')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('conversation_id', '=', conversation.id)
              .executeTakeFirstOrThrow()
          ).n,
        );
      assert.equal(await messagesLeft(), seeded);

      // Event-loop turns that ran while the erasure did: a chat's timers and sockets get the same turns.
      let turns = 0;
      let erasing = true;
      const countTurns = () => {
        if (!erasing) return;
        turns++;
        setImmediate(countTurns);
      };
      setImmediate(countTurns);
      const erasure = server.ctx.privacy.service
        .erase(companyId, { conversation_id: conversation.id }, { actor: 'test' })
        .finally(() => {
          erasing = false;
        });
      // Once the first messages are gone, the visitor's next message arrives (the erasure is under way).
      for (let i = 0; i < 100_000 && erasing && (await messagesLeft()) === seeded; i++) await nextTurn();
      const arriving = await server.ctx.webchat.store
        .insert({
          conversationId: conversation.id,
          role: 'user',
          author: null,
          status: 'complete',
          blocks: [{ id: randomUUID(), type: 'markdown', content: `sent mid-erase ${canary}` }],
        })
        .then(
          () => 'stored' as const,
          (err: { code?: string }) => err.code,
        );
      const receipt = await erasure;
      if (database === 'sqlite') {
        assert.equal(arriving, 'stored', 'the message arrived while the erasure ran');
        assert.ok(turns > 10, `the event loop turned ${turns} times during the erasure`);
      }
      assert.ok(arriving === 'stored' || arriving === 'conversation_not_found', String(arriving));
      assert.equal(receipt.erased.messages, seeded + (arriving === 'stored' ? 1 : 0), 'counted as removed');
      assert.equal(receipt.erased.conversations, 1);
      assert.equal(await messagesLeft(), 0);
      // After the erasure the conversation is gone: a late write is refused with the writer's 404.
      await assert.rejects(
        server.ctx.webchat.store.insert({
          conversationId: conversation.id,
          role: 'user',
          author: null,
          status: 'complete',
          blocks: [{ id: randomUUID(), type: 'markdown', content: `too late ${canary}` }],
        }),
        (err: { code?: string; status?: number }) => err.code === 'conversation_not_found',
      );
      assert.equal((await server.ctx.webchat.search.search(companyId, canary, { limit: 10 })).length, 0);
      assert.ok(!dumpContains(canary), 'no dump holds the canary after');
    });

    it('exports a conversation as one JSON document whose attachment urls download the files', async (t) => {
      const v = newVisitor(companyId);
      const { conversation: created, c } = await connectToNewConversation(server, v);
      t.after(() => c.close());
      const conversationId = created.id;
      const bytes = Buffer.from(`export me ${randomUUID()}\n`);
      const upload = await sdkUpload(server, v, conversationId, fileForm(bytes, 'a.txt', 'text/plain'));
      assert.equal(upload.status, 201, upload.text);
      await c.sub.publish({
        version: 1,
        client_message_id: randomUUID(),
        blocks: [
          { type: 'markdown', content: 'hello export' },
          { type: 'attachment', attachment_id: upload.body.id },
        ],
      });
      await c.log.waitFor((envelopes) => digitalEmployeeCompletes(envelopes).length >= 1);
      c.close();
      const res = await post('/exports', { conversation_id: conversationId });
      assert.equal(res.status, 200, res.text);
      const doc = JSON.parse(res.text);
      assert.equal(doc.visitor.session_id, v.sessionId);
      assert.equal(doc.conversations.length, 1);
      const [conversation] = doc.conversations;
      assert.equal(conversation.id, conversationId);
      assert.ok(
        conversation.messages.some((m: { blocks: Array<{ content?: string }> }) =>
          m.blocks.some((b) => b.content === 'hello export'),
        ),
      );
      assert.equal(conversation.attachments.length, 1);
      const [attachment] = conversation.attachments;
      assert.equal(attachment.sha256, createHash('sha256').update(bytes).digest('hex'));
      const file = await download(attachment.url);
      assert.equal(file.status, 200);
      assert.deepEqual(file.bytes, bytes);
    });

    it('refuses a request without exactly one selector, an unknown conversation and a token without the scope', async () => {
      for (const body of [{}, { visitor_sub: 'a', session_id: 'b' }]) {
        const res = await post('/erasures', body);
        assert.equal(res.status, 400);
        assert.equal(res.body.code, 'invalid_privacy_selector');
      }
      const unknown = await post('/exports', { conversation_id: randomUUID() });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'conversation_not_found');
      const reader = await createTestClient(server.ctx, ['conversations:read'], companyId);
      const res = await post(
        '/erasures',
        { session_id: 'x' },
        { authorization: `Bearer ${await fetchToken(server, reader)}` },
      );
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'insufficient_scope');
    });

    it('the retention sweep deletes resolved conversations, delivered deliveries and audit entries past their days', async () => {
      const db = server.ctx.store.db;
      const employee = await server.ctx.webchat.conversations.defaultDigitalEmployee(companyId);
      const make = async (status: string) => {
        const conversation = await server.ctx.webchat.conversations.create(
          { companyId, sessionId: randomUUID() },
          employee.id,
        );
        await server.ctx.webchat.store.insert({
          conversationId: conversation.id,
          role: 'user',
          author: null,
          status: 'complete',
          blocks: [{ id: randomUUID(), type: 'markdown', content: 'old words' }],
        });
        await db.updateTable('conversations').set({ status }).where('id', '=', conversation.id).execute();
        return conversation.id;
      };
      const resolved = await make('closed');
      const open = await make('open');
      // Off by default: nothing is deleted however old.
      const sweeper = new RetentionSweeper({
        db,
        dialect: server.ctx.store.dialect,
        privacy: server.ctx.privacy.service,
      });
      await sweeper.runBatch(Date.now() + 400 * DAY_MS);
      assert.equal(
        (await db.selectFrom('conversations').select('id').where('id', '=', resolved).execute()).length,
        1,
      );

      await server.ctx.privacy.retention.set(companyId, {
        resolved_conversation_days: 30,
        delivered_webhook_days: 7,
        audit_days: 365,
      });
      const deleted: Record<string, number> = {};
      const counted = new RetentionSweeper({
        db,
        dialect: server.ctx.store.dialect,
        privacy: server.ctx.privacy.service,
        batchSize: 20,
        onDeleted: (kind, n) => {
          deleted[kind] = (deleted[kind] ?? 0) + n;
        },
      });
      // On SQLite a batch is bounded by time (10 ms of the store's), so on a loaded machine it deletes only a few rows:
      // the bound on batches is about termination, not speed; the sweep must have finished within it.
      let more = true;
      for (let i = 0; i < 5_000 && more; i++) more = (await counted.runBatch(Date.now() + 400 * DAY_MS)).more;
      assert.equal(more, false, 'the sweep finished');
      const ids = (
        await db.selectFrom('conversations').select('id').where('id', 'in', [resolved, open]).execute()
      ).map((r) => r.id);
      assert.deepEqual(ids, [open], 'the resolved conversation went, the open one stays');
      assert.ok((deleted.conversation ?? 0) >= 1);
      assert.equal(
        (await db.selectFrom('audit_events').select('id').where('company_id', '=', companyId).execute())
          .length,
        0,
        'audit entries older than 365 days went',
      );
      await server.ctx.privacy.retention.set(companyId, {
        resolved_conversation_days: null,
        delivered_webhook_days: null,
        audit_days: null,
      });
    });

    it('a paced sweep ends its batch once its time budget is spent and finishes over the next ones', async () => {
      const db = server.ctx.store.db;
      const employee = await server.ctx.webchat.conversations.defaultDigitalEmployee(companyId);
      const conversation = await server.ctx.webchat.conversations.create(
        { companyId, sessionId: randomUUID() },
        employee.id,
      );
      for (let i = 0; i < 12; i++)
        await server.ctx.webchat.store.insert({
          conversationId: conversation.id,
          role: 'user',
          author: null,
          status: 'complete',
          blocks: [{ id: randomUUID(), type: 'markdown', content: `old words ${i}` }],
        });
      await db
        .updateTable('conversations')
        .set({ status: 'closed' })
        .where('id', '=', conversation.id)
        .execute();
      await server.ctx.privacy.retention.set(companyId, {
        resolved_conversation_days: 30,
        delivered_webhook_days: null,
        audit_days: null,
      });
      const messagesLeft = async () =>
        (
          await db
            .selectFrom('messages')
            .select('id')
            .where('conversation_id', '=', conversation.id)
            .execute()
        ).length;
      // A budget of 0 ms is spent by the first statement: the batch stops there (a batch bounded by rows only would
      // take all 12 messages and the conversation at once).
      const sweeper = new RetentionSweeper({
        db,
        dialect: server.ctx.store.dialect,
        privacy: server.ctx.privacy.service,
        batchBudgetMs: 0,
      });
      const first = await sweeper.runBatch(Date.now() + 400 * DAY_MS);
      assert.equal(first.more, true);
      const left = await messagesLeft();
      assert.ok(left > 0 && left < 12, `one small statement ran (${left} of 12 left)`);
      let batches = 1;
      while (batches < 5_000 && (await sweeper.runBatch(Date.now() + 400 * DAY_MS)).more) batches++;
      assert.ok(batches > 2, 'the rest took further batches');
      assert.equal(await messagesLeft(), 0);
      assert.equal(
        (await db.selectFrom('conversations').select('id').where('id', '=', conversation.id).execute())
          .length,
        0,
      );
      await server.ctx.privacy.retention.set(companyId, {
        resolved_conversation_days: null,
        delivered_webhook_days: null,
        audit_days: null,
      });
    });
  });
}

function readFileSyncOrEmpty(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch {
    return Buffer.alloc(0);
  }
}
