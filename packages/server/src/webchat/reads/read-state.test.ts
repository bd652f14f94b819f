import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  bearer,
  connectVisitor,
  createConversation,
  digitalEmployeeCompletes,
  fetchPlatformToken,
  listMessages,
  newVisitor,
  sdkGet,
  sdkPost,
  sendMessage,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';
import { readMarksOf } from '@parley/webchat-protocol';

for (const database of TEST_DATABASES) {
  describe(`read state (${database})`, () => {
    let server: TestServer;
    let acmeId: string;
    let agent: PortalTestClient;
    let globex: PortalTestClient;
    let token: string;
    before(async () => {
      ({ server, acmeId, agent, globex } = await startPortalWorld(database));
      token = await fetchPlatformToken(server, acmeId, ['conversations:write']);
    });
    after(() => server.close());

    const unreadOf = async (v: Visitor, conversationId: string) => {
      const list = await sdkGet(server, v, '/conversations');
      return list.body.conversations.find((c: { id: string }) => c.id === conversationId).unread_count;
    };
    const agentPost = (conversationId: string, content: string) =>
      http(
        `${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`,
        bearer(token, { blocks: [{ type: 'markdown', content }] }),
      );

    it('counts the digital-employee, agent and system messages after the visitor’s mark; sending moves it', async () => {
      const v = newVisitor(acmeId);
      const conversation = await createConversation(server, v);
      assert.equal(await unreadOf(v, conversation.id), 1, 'the greeting');
      const [greeting] = (await listMessages(server, v, conversation.id)).body.messages;
      const read = await sdkPost(server, v, `/conversations/${conversation.id}/read`, {
        message_id: greeting.id,
      });
      assert.equal(read.status, 204);
      assert.equal(read.text, '');
      assert.equal(await unreadOf(v, conversation.id), 0);
      const single = await sdkGet(server, v, `/conversations/${conversation.id}`);
      assert.equal(single.body.unread_count, 0);

      // An agent takes over: the system notice and the agent's message are both unread.
      assert.equal((await agentPost(conversation.id, 'Hi, Kim here.')).status, 201);
      assert.equal(await unreadOf(v, conversation.id), 2);
      // Marking an earlier message read never moves the mark back.
      await sdkPost(server, v, `/conversations/${conversation.id}/read`, { message_id: greeting.id });
      assert.equal(await unreadOf(v, conversation.id), 2);

      // The visitor answers: their own message moves their mark past everything before it.
      const live = await connectVisitor(server, v, conversation);
      try {
        await sendMessage(live.sub, 'Hello Kim');
        await live.log.waitFor((es) => es.some((e) => e.message_snapshot.role === 'user'));
      } finally {
        live.close();
      }
      assert.equal(await unreadOf(v, conversation.id), 0);
      assert.equal((await agentPost(conversation.id, 'How can I help?')).status, 201);
      assert.equal(await unreadOf(v, conversation.id), 1);
    });

    it('refuses reads of unknown messages, bad bodies and other visitors’ conversations with documented codes', async () => {
      const v = newVisitor(acmeId);
      const conversation = await createConversation(server, v);
      const path = `/conversations/${conversation.id}/read`;
      const unknown = await sdkPost(server, v, path, { message_id: randomUUID() });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'message_not_found');
      for (const body of [{}, { message_id: 'nope' }, { message_id: randomUUID(), extra: 1 }]) {
        const res = await sdkPost(server, v, path, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.code, 'validation_failed');
      }
      const [greeting] = (await listMessages(server, v, conversation.id)).body.messages;
      const stranger = await sdkPost(server, newVisitor(acmeId), path, { message_id: greeting.id });
      assert.equal(stranger.status, 404);
      assert.equal(stranger.body.code, 'conversation_not_found');
      // Another conversation's message is not this one's.
      const other = await createConversation(server, v);
      const cross = await sdkPost(server, v, `/conversations/${other.id}/read`, { message_id: greeting.id });
      assert.equal(cross.body.code, 'message_not_found');
    });

    it('agents read through the portal: their unread counts, and "seen" reaching the visitor live and on resubscribe', async () => {
      const v = newVisitor(acmeId);
      const conversation = await createConversation(server, v);
      const live = await connectVisitor(server, v, conversation);
      try {
        assert.deepEqual(readMarksOf(live.subscribedData[0]), { visitor: 0, agent: 0 });
        await sendMessage(live.sub, 'Is anyone there?');
        await live.log.waitFor((es) => digitalEmployeeCompletes(es).length > 0);
        const row = async () =>
          (await agent.get('/inbox/conversations?status=open')).body.items.find(
            (c: { id: string }) => c.id === conversation.id,
          );
        assert.equal((await row()).unread_count, 1, 'one visitor message unread by agents');

        const marked = await agent.post(`/inbox/conversations/${conversation.id}/read`, {});
        assert.equal(marked.status, 200);
        const messages = (await listMessages(server, v, conversation.id)).body.messages;
        const latest = messages.at(-1);
        assert.deepEqual(marked.body, { visitor: messages[1].position, agent: latest.position });
        assert.equal((await row()).unread_count, 0);

        // The visitor's clients learn it at once, from a publication outside history.
        const [event] = await waitFor('the read event', () => live.readEvents.length > 0 && live.readEvents);
        assert.equal(event!.reader, 'agent');
        assert.equal(event!.position, latest.position);
        assert.equal(event!.message_id, latest.id);
        assert.equal(event!.version, 1);
        assert.ok(!Number.isNaN(Date.parse(event!.read_at)));
        const history = await server.ctx.webchat.realtime.history(conversation.channel, { limit: 100 });
        assert.ok(
          history.publications.every((p) => !String(p.data).includes('"event":"read"')),
          'history keeps one entry per message',
        );
        // Reading again changes nothing and announces nothing.
        await agent.post(`/inbox/conversations/${conversation.id}/read`, {});
        const again = await connectVisitor(server, v, conversation);
        try {
          assert.deepEqual(readMarksOf(again.subscribedData[0]), {
            visitor: messages[1].position,
            agent: latest.position,
          });
          assert.equal(live.readEvents.length, 1);
        } finally {
          again.close();
        }
      } finally {
        live.close();
      }

      // Reading up to a named message; an unknown one, or another company's conversation, is refused.
      const named = await agent.post(`/inbox/conversations/${conversation.id}/read`, {
        message_id: randomUUID(),
      });
      assert.equal(named.status, 404);
      assert.equal(named.body.code, 'message_not_found');
      const foreign = await globex.post(`/inbox/conversations/${conversation.id}/read`, {});
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.code, 'conversation_not_found');
      const detail = await agent.get(`/inbox/conversations/${conversation.id}`);
      assert.equal(detail.body.conversation.unread_count, 0);
      assert.ok(detail.body.read_marks.agent > 0);
    });
  });
}
