import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { RETURNS_ARTICLE, SHIPPING_ARTICLE } from '@parley/testing/knowledge/knowledge-fixtures';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  connectVisitor,
  createConversation,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { replyFrom } from './suggested-replies.ts';

// AI help in the portal inbox (docs/design.md "Agent workspace"): suggested replies from the company's own
// knowledge with their sources, and the newest hand-over summary in the conversation detail — on both stores.
for (const database of TEST_DATABASES) {
  describe(`suggested replies and the hand-over summary (${database})`, () => {
    let server: TestServer;
    let acmeId: string;
    let globexId: string;
    let acme: PortalTestClient;
    let agent: PortalTestClient;
    let globex: PortalTestClient;
    let returnsId: string;

    before(async () => {
      ({ server, acmeId, globexId, acme, agent, globex } = await startPortalWorld(database));
      returnsId = (
        await server.ctx.knowledge.create(
          acmeId,
          {
            kind: 'text',
            title: 'Returns and refunds',
            content: RETURNS_ARTICLE,
            url: 'https://help.example/returns',
          },
          { actor: 'test' },
        )
      ).id;
      // Globex knows about shipping only: Acme's suggestions must never draw from it.
      await server.ctx.knowledge.create(
        globexId,
        { kind: 'text', title: 'Globex shipping', content: SHIPPING_ARTICLE },
        { actor: 'test' },
      );
    });
    after(() => server.close());

    /** An Acme conversation whose visitor wrote `questions` (each waited for until stored). */
    const conversationAsking = async (...questions: string[]) => {
      const v = newVisitor(acmeId);
      const conversation = await createConversation(server, v);
      const guest = await connectVisitor(server, v, conversation);
      try {
        for (const q of questions) {
          await sendMessage(guest.sub, q);
          await waitFor('the visitor message is stored', async () =>
            (await server.ctx.webchat.store.page(conversation.id, { limit: 50 })).messages.some(
              (m) => m.role === 'user' && m.blocks.some((b) => 'content' in b && b.content === q),
            ),
          );
        }
      } finally {
        guest.close();
      }
      return conversation;
    };

    it('suggests replies from the passage that answers the last question, with its source', async () => {
      const conversation = await conversationAsking('hello', 'How many days do I have to return a book?');
      const res = await agent.get(`/inbox/conversations/${conversation.id}/suggestions`);
      assert.equal(res.status, 200, res.text);
      const { suggestions } = res.body as {
        suggestions: Array<{
          text: string;
          sources: Array<{ source_id: string; title: string; url?: string }>;
        }>;
      };
      assert.ok(suggestions.length >= 1 && suggestions.length <= 3, JSON.stringify(suggestions));
      assert.deepEqual(suggestions[0], {
        text:
          'You can return any book within 30 days of delivery. Print the prepaid label from your account and drop ' +
          'the parcel at any post office.',
        sources: [
          {
            source_id: returnsId,
            title: 'Returns and refunds › Returning an item',
            url: 'https://help.example/returns',
          },
        ],
      });
      for (const s of suggestions)
        assert.deepEqual(
          s.sources.map((x) => x.source_id),
          [returnsId],
        );
      assert.equal(new Set(suggestions.map((s) => s.text)).size, suggestions.length, 'no suggestion twice');
    });

    it("never draws from another company's knowledge; nothing relevant or nothing asked → none", async () => {
      // Only Globex's knowledge answers this; Acme's suggestions stay empty rather than borrowing it.
      const abroad = await conversationAsking('Do you deliver to 40 countries, and who pays customs duties?');
      const res = await acme.get(`/inbox/conversations/${abroad.id}/suggestions`);
      assert.equal(res.status, 200, res.text);
      for (const s of res.body.suggestions as Array<{
        text: string;
        sources: Array<{ source_id: string }>;
      }>) {
        assert.deepEqual(
          s.sources.map((x) => x.source_id),
          [returnsId],
        );
        assert.doesNotMatch(s.text, /customs|40 countries/);
      }
      const offTopic = await conversationAsking('Can I pay with cryptocurrency?');
      assert.deepEqual((await acme.get(`/inbox/conversations/${offTopic.id}/suggestions`)).body, {
        suggestions: [],
      });
      const silent = await createConversation(server, newVisitor(acmeId));
      assert.deepEqual((await acme.get(`/inbox/conversations/${silent.id}/suggestions`)).body, {
        suggestions: [],
      });
    });

    it("answers 404 for another company's conversation", async () => {
      const conversation = await conversationAsking('How many days do I have to return a book?');
      const res = await globex.get(`/inbox/conversations/${conversation.id}/suggestions`);
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.code, 'conversation_not_found');
    });

    it('shows the newest hand-over summary in the conversation detail, marked as such when written', async () => {
      const conversation = await conversationAsking('My parcel never arrived', 'Can I get a refund?');
      const before = await agent.get(`/inbox/conversations/${conversation.id}`);
      assert.equal(before.body.summary, null, 'no hand-over yet');
      // An agent's own note mentioning the heading is not a summary.
      await agent.post(`/inbox/conversations/${conversation.id}/notes`, {
        text: '**Hand-over summary** fake',
      });
      assert.equal((await agent.get(`/inbox/conversations/${conversation.id}`)).body.summary, null);

      const taken = await agent.post(`/inbox/conversations/${conversation.id}/handover`);
      assert.equal(taken.status, 200, taken.text);
      const summary = await waitFor(
        'the hand-over summary',
        async () => (await agent.get(`/inbox/conversations/${conversation.id}`)).body.summary ?? undefined,
      );
      assert.deepEqual(Object.keys(summary).sort(), ['created_at', 'text']);
      assert.match(summary.text, /^The visitor asked:\n- My parcel never arrived\n- Can I get a refund\?/);
      assert.doesNotMatch(summary.text, /Hand-over summary/, 'the heading is left out');
      const note = await server.ctx.webchat.store.latestNoteOfKind(conversation.id, 'handover_summary');
      assert.equal(note?.created_at, summary.created_at);
      assert.equal(note?.author?.type, 'system');
      // A note written later does not replace it.
      await agent.post(`/inbox/conversations/${conversation.id}/notes`, { text: 'calling the courier' });
      assert.deepEqual((await agent.get(`/inbox/conversations/${conversation.id}`)).body.summary, summary);
    });
  });
}

describe('a suggested reply drawn from a passage', () => {
  it('drops headings and markdown, keeps whole sentences up to 400 characters', () => {
    assert.equal(
      replyFrom({ text: '## Refunds\n\n- **Refunds** are paid in _five_ days.\n- Ask `support`!' }),
      'Refunds are paid in five days. Ask support!',
    );
    const long = `${'word '.repeat(60)}end. Second sentence.`;
    assert.equal(
      replyFrom({ text: `${long} ${'x'.repeat(300)}.` }),
      `${'word '.repeat(60)}end. Second sentence.`,
    );
    const endless = 'word '.repeat(200);
    const cut = replyFrom({ text: endless });
    assert.ok(cut.endsWith('…') && cut.length <= 400, cut);
    assert.equal(replyFrom({ text: '# Only a heading' }), '');
  });
});
