import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalWorld, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import {
  bearer,
  connectVisitor,
  createConversation,
  fetchPlatformToken,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import type { MessageEnvelope } from '../messages/message.ts';

// One contract for search (docs/routing.md "Search") over both stores: PostgreSQL full-text search (GIN index on a
// tsvector) and SQLite FTS5 kept in step by triggers must give the same answers.
for (const database of TEST_DATABASES) {
  describe(`conversation search (${database})`, () => {
    let world: PortalWorld;
    const ids: Record<string, string> = {};
    before(async () => {
      world = await startPortalWorld(database, { config: { webchat: { streamFlushIntervalMs: 0 } } });
      const { server, acmeId, globexId } = world;
      const employee = await server.ctx.webchat.conversations.defaultDigitalEmployee(acmeId);
      const seed = async (
        name: string,
        companyId: string,
        visitor: { name: string; email: string } | null,
        texts: string[],
      ) => {
        const conversation = await server.ctx.webchat.conversations.create(
          { companyId, sessionId: randomUUID() },
          companyId === acmeId
            ? employee.id
            : (await server.ctx.webchat.conversations.defaultDigitalEmployee(companyId)).id,
          visitor
            ? { key: `visitor:${randomUUID()}`, id: `crm-${name}`, channelId: randomUUID(), ...visitor }
            : undefined,
        );
        for (const content of texts)
          await server.ctx.webchat.store.insert({
            conversationId: conversation.id,
            role: 'user',
            author: null,
            status: 'complete',
            blocks: [{ id: randomUUID(), type: 'markdown', content }],
          });
        ids[name] = conversation.id;
      };
      await seed('refund', acmeId, { name: 'Zoë Martin', email: 'zoe@example.org' }, [
        'Hello there',
        'My card reference is ref-3f2a1b4c-4021-4abc-9def-0123456789ab.',
        'And the voucher code-4e8b4f56-814d.',
        'I would like a **refund** for order 4711, the parcel arrived broken.',
      ]);
      await seed('shipping', acmeId, null, ['When does my parcel ship?', 'Is shipping free to Canada?']);
      await seed('globex', globexId, { name: 'Zoë Other', email: 'zoe@globex.test' }, ['refund please']);
    });
    after(() => world.server.close());

    const search = async (q: string, extra = '') => {
      const res = await world.agent.get(`/inbox/search?q=${encodeURIComponent(q)}${extra}`);
      assert.equal(res.status, 200, res.text);
      return res.body as {
        items: Array<{
          id: string;
          match: { role: string; excerpt: string } | null;
          unread_count: number;
          last_message: { role: string; text: string } | null;
        }>;
        next_cursor: string | null;
      };
    };
    const hitIds = async (q: string) => (await search(q)).items.map((i) => i.id).sort();

    it('finds message text by whole words and prefixes, all words required, any case', async () => {
      assert.deepEqual(await hitIds('refund'), [ids.refund]);
      assert.deepEqual(await hitIds('REFU'), [ids.refund], 'prefix, case-insensitive');
      assert.deepEqual(await hitIds('parcel'), [ids.refund, ids.shipping].sort());
      assert.deepEqual(await hitIds('parcel broken'), [ids.refund], 'every word must match');
      assert.deepEqual(await hitIds('4711'), [ids.refund]);
      // PostgreSQL's parser reads `-4021` as a signed number and `-4abc` as `-4` and `abc`: the query must be cut as the
      // text was, or a value copied from the transcript would not find it.
      assert.deepEqual(await hitIds('ref-3f2a1b4c-4021-4abc-9def-0123456789ab'), [ids.refund]);
      // A lexeme that reads as a number with an exponent (`4e8b4f56`: `4e8` and `b4f56`) is taken as it is, never
      // parsed a second time into a phrase the text does not hold.
      assert.deepEqual(await hitIds('code-4e8b4f56-814d'), [ids.refund]);
      assert.deepEqual(await hitIds('markdown'), [], 'block JSON keys and types are not text');
      assert.deepEqual(await hitIds('nothing-like-this'), []);
      const [hit] = (await search('broken')).items;
      assert.equal(hit!.match!.role, 'user');
      assert.match(hit!.match!.excerpt, /parcel arrived broken/);
      // A hit is the conversation's inbox entry, so the list shows its preview and unread count as it does live.
      assert.equal(typeof hit!.unread_count, 'number');
      assert.deepEqual(
        { role: hit!.last_message!.role, text: hit!.last_message!.text },
        { role: 'user', text: 'I would like a refund for order 4711, the parcel arrived broken.' },
      );
    });

    it('finds the visitor by name, email and id, and the conversation by its short id', async () => {
      assert.deepEqual(await hitIds('zoë mar'), [ids.refund]);
      assert.deepEqual(await hitIds('ZOE@EXAMPLE'), [ids.refund]);
      assert.deepEqual(await hitIds('crm-shipping'), []);
      assert.deepEqual(await hitIds('crm-refund'), [ids.refund]);
      assert.deepEqual(await hitIds(`#${ids.shipping!.slice(0, 8)}`), [ids.shipping]);
      assert.equal((await search('zoe@example')).items[0]!.match, null, 'no message matched');
      // LIKE wildcards in the query are literal.
      assert.deepEqual(await hitIds('%'), []);
    });

    it('never crosses companies, pages with a cursor, and refuses an empty query', async () => {
      assert.ok(!(await hitIds('refund')).includes(ids.globex!));
      const first = await search('parcel', '&limit=1');
      assert.equal(first.items.length, 1);
      assert.ok(first.next_cursor);
      const second = await search('parcel', `&limit=1&cursor=${encodeURIComponent(first.next_cursor!)}`);
      assert.equal(second.items.length, 1);
      assert.notEqual(second.items[0]!.id, first.items[0]!.id);
      assert.equal(second.next_cursor, null);
      const empty = await world.agent.get('/inbox/search?q=%20');
      assert.equal(empty.status, 400);
      assert.equal(empty.body.code, 'validation_failed');
    });

    it('indexes a message once complete: a streaming snapshot is never found, its final text is', async () => {
      const { server, acmeId } = world;
      const store = server.ctx.webchat.store;
      const employee = await server.ctx.webchat.conversations.defaultDigitalEmployee(acmeId);
      const conversation = await server.ctx.webchat.conversations.create(
        { companyId: acmeId, sessionId: randomUUID() },
        employee.id,
      );
      const partial = await store.insert({
        conversationId: conversation.id,
        role: 'digital_employee',
        author: null,
        status: 'partial',
        blocks: [{ id: randomUUID(), type: 'markdown', content: 'quokkadraft half written' }],
      });
      await store.persistPartial(
        {
          ...partial,
          blocks: [{ id: randomUUID(), type: 'markdown', content: 'quokkadraft still streaming' }],
        },
        99,
      );
      assert.deepEqual(await hitIds('quokkadraft'), [], 'partial snapshots are not in the index');
      const final = { ...partial, status: 'complete' as const };
      final.blocks = [{ id: randomUUID(), type: 'markdown', content: 'quokkafinal answer' }];
      assert.equal(await store.complete(final, 100), true);
      assert.deepEqual(await hitIds('quokkafinal'), [conversation.id]);
      assert.deepEqual(await hitIds('quokkadraft'), []);
    });

    it('finds a streamed digital-employee reply once complete, and answers on the platform API too', async () => {
      const { server, acmeId } = world;
      const v = newVisitor(acmeId);
      const conversation = await createConversation(server, v);
      const guest = await connectVisitor(server, v, conversation);
      try {
        await sendMessage(guest.sub, 'xylophone lessons');
        const streamed = (e: MessageEnvelope) =>
          e.operation === 'complete' && e.message_snapshot.role === 'digital_employee' && e.sequence > 1;
        await guest.log.waitFor((es) => es.some(streamed), 20_000, 'a streamed reply');
        const done = guest.log.envelopes.find(streamed)!;
        const text = done.message_snapshot.blocks.map((b) => ('content' in b ? b.content : '')).join(' ');
        const words = text.match(/[A-Za-z]{5,}/g) ?? [];
        assert.ok(words.length > 0);
        const hit = (await search(words.at(-1)!)).items.find((i) => i.id === conversation.id);
        assert.equal(hit?.match?.role, 'digital_employee');
      } finally {
        guest.close();
      }
      const token = await fetchPlatformToken(server, acmeId, ['conversations:read']);
      const res = await fetch(
        `${server.baseUrl}/platform/v1/conversations/search?q=xylophone`,
        bearer(token),
      );
      assert.equal(res.status, 200);
      const body = (await res.json()) as { conversations: Array<{ id: string; match: { role: string } }> };
      assert.deepEqual(
        body.conversations.map((c) => [c.id, c.match.role]),
        [[conversation.id, 'user']],
      );
    });
  });
}
