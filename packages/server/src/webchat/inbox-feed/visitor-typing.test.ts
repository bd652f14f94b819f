import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestClock } from '@parley/testing/clock';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalWorld, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import { waitFor } from '@parley/testing/wait';
import { connectVisitor, createConversation, newVisitor } from '@parley/testing/webchat/webchat-fixtures';
import type { InboxPublication, InboxVisitorTyping } from '@parley/webchat-protocol';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';

const TYPING = { version: 1, event: 'typing' };

// The visitor typing indicator (docs/routing.md "Live inbox"): a visitor's `{"version":1,"event":"typing"}` on its
// conversation channel reaches the company's agents as the inbox channel's `visitor_typing`, at most once per
// session every 2 s, and is stored nowhere nor echoed on the conversation channel.
for (const database of TEST_DATABASES) {
  describe(`visitor typing relayed to the inbox (${database})`, () => {
    let world: PortalWorld;
    const events: InboxPublication[] = [];
    let agent: Centrifuge;
    // The relay window is an in-memory rate limit on this clock: the test moves it instead of waiting 2 s.
    const clock = new TestClock();
    before(async () => {
      world = await startPortalWorld(database, { clock: clock.now });
      const grant = await world.agent.post('/inbox/realtime', {});
      assert.equal(grant.status, 200, grant.text);
      agent = new Centrifuge(`${world.server.baseUrl.replace(/^http/, 'ws')}/connection/websocket`, {
        websocket: WebSocket,
        token: grant.body.connection_token,
      });
      const sub = agent.newSubscription(grant.body.channel, { token: grant.body.subscription_token });
      sub.on('publication', (ctx) => events.push(ctx.data as InboxPublication));
      const subscribed = new Promise((resolve) => sub.on('subscribed', resolve));
      agent.connect();
      sub.subscribe();
      await subscribed;
    });
    after(async () => {
      agent.disconnect();
      await world.server.close();
    });

    const typingOf = (id: string) =>
      events.filter(
        (e): e is InboxVisitorTyping =>
          'event' in e && e.event === 'visitor_typing' && e.conversation_id === id,
      );
    // Visitor messages only: a greeting the digital employee may post meanwhile is not what typing could add.
    const storedVisitorMessages = async (id: string) =>
      (
        await world.server.ctx.store.db
          .selectFrom('messages')
          .select('id')
          .where('conversation_id', '=', id)
          .where('role', '=', 'user')
          .execute()
      ).length;

    it('relays one typing per 2 s to the agents, stores nothing and echoes nothing to the visitor', async () => {
      const v = newVisitor(world.acmeId);
      const conversation = await createConversation(world.server, v);
      const guest = await connectVisitor(world.server, v, conversation);
      try {
        const sentAt = Date.now();
        await guest.sub.publish(TYPING);
        const [first] = await waitFor(
          'visitor_typing',
          () => typingOf(conversation.id).length > 0 && typingOf(conversation.id),
        );
        assert.deepEqual(Object.keys(first!).sort(), ['at', 'conversation_id', 'event', 'version']);
        assert.equal(first!.event, 'visitor_typing');
        assert.ok(Math.abs(Date.parse(first!.at) - sentAt) < 5000, first!.at);

        // A second one within 2 s is acknowledged but not relayed.
        clock.advance(1_900);
        await guest.sub.publish(TYPING);
        // After the window, the next one is relayed again; it reaches the agents after the second would have (one
        // inbox channel, in order), so by then the second is shown to have been dropped.
        clock.advance(200);
        await guest.sub.publish(TYPING);
        await waitFor('the next visitor_typing', () => typingOf(conversation.id).length >= 2);
        assert.equal(typingOf(conversation.id).length, 2, 'the second typing within 2 s is dropped');

        assert.equal(await storedVisitorMessages(conversation.id), 0, 'typing stores no message');
        assert.deepEqual(
          guest.log.envelopes.filter((e) => e.message_snapshot.role === 'user'),
          [],
          'nothing is published on the visitor channel',
        );
      } finally {
        guest.close();
      }
    });

    it('refuses typing with extra fields, another version, or in a closed conversation', async () => {
      const v = newVisitor(world.acmeId);
      const conversation = await createConversation(world.server, v);
      const guest = await connectVisitor(world.server, v, conversation);
      try {
        const refusal = (data: unknown) =>
          guest.sub.publish(data).then(
            () => 'accepted',
            (err: { code: number }) => err.code,
          );
        assert.equal(await refusal({ ...TYPING, text: 'secret draft' }), 400);
        assert.equal(await refusal({ version: 1, event: 'stopped_typing' }), 400);
        assert.equal(await refusal({ version: 2, event: 'typing' }), 401);
        const closed = await world.agent.post(`/inbox/conversations/${conversation.id}/close`, {});
        assert.ok(closed.status < 300, closed.text);
        const before = typingOf(conversation.id).length;
        assert.equal(await refusal(TYPING), 409);
        // Another visitor's typing reaches the agents after anything the refused one could have relayed.
        const other = newVisitor(world.acmeId);
        const otherConversation = await createConversation(world.server, other);
        const otherGuest = await connectVisitor(world.server, other, otherConversation);
        try {
          await otherGuest.sub.publish(TYPING);
          await waitFor('the other visitor_typing', () => typingOf(otherConversation.id).length > 0);
        } finally {
          otherGuest.close();
        }
        assert.equal(typingOf(conversation.id).length, before, 'a closed conversation relays nothing');
      } finally {
        guest.close();
      }
    });
  });
}
