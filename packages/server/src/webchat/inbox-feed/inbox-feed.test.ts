import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalWorld, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  connectVisitor,
  createConversation,
  newVisitor,
  sdkPost,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import type { InboxEvent } from '@parley/webchat-protocol';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import { createLogger } from '../../logging/logger.ts';
import { ConversationsService } from '../conversations/conversations.service.ts';
import { InboxFeed, previewOf } from './inbox-feed.ts';

// The live inbox (docs/routing.md "Live inbox"): agents follow their company's inbox channel; every change of a
// conversation arrives as its new list entry, and no other company's ever does.
for (const database of TEST_DATABASES) {
  describe(`live inbox feed (${database})`, () => {
    let world: PortalWorld;
    const events: InboxEvent[] = [];
    const clients: Centrifuge[] = [];
    before(async () => {
      world = await startPortalWorld(database, { config: { webchat: { streamFlushIntervalMs: 0 } } });
    });
    after(async () => {
      for (const c of clients) c.disconnect();
      await world.server.close();
    });

    const follow = async (who: PortalWorld['agent'], into: InboxEvent[]) => {
      const grant = await who.post('/inbox/realtime', {});
      assert.equal(grant.status, 200, grant.text);
      const client = new Centrifuge(`${world.server.baseUrl.replace(/^http/, 'ws')}/connection/websocket`, {
        websocket: WebSocket,
        token: grant.body.connection_token,
      });
      clients.push(client);
      const sub = client.newSubscription(grant.body.channel, { token: grant.body.subscription_token });
      // The channel also carries typing, note and mention events (InboxPublication); these tests follow the entries.
      sub.on('publication', (ctx) => {
        if ((ctx.data as InboxEvent).type === 'conversation') into.push(ctx.data as InboxEvent);
      });
      const subscribed = new Promise((resolve) => sub.on('subscribed', resolve));
      client.connect();
      sub.subscribe();
      await subscribed;
      return grant.body.channel as string;
    };

    it('pushes a new conversation, each message and the queue to the company’s agents only', async () => {
      const channel = await follow(world.agent, events);
      assert.equal(channel, `inbox:companies.${world.acmeId}`);
      const globexEvents: InboxEvent[] = [];
      await follow(world.globex, globexEvents);

      const v = newVisitor(world.acmeId);
      const conversation = await createConversation(world.server, v);
      const of = () => events.filter((e) => e.conversation.id === conversation.id);
      await waitFor('the new conversation', () => of().length > 0 || undefined);

      const guest = await connectVisitor(world.server, v, conversation);
      try {
        await sendMessage(guest.sub, 'Where is my **parcel**?');
        const withText = await waitFor('the visitor message', () =>
          of().find((e) => e.conversation.last_message?.role === 'user'),
        );
        assert.equal(withText.conversation.last_message?.text, 'Where is my parcel?');
        assert.ok(withText.conversation.unread_count >= 1);
        // The bot's reply follows, then the visitor asks for a person: the entry shows it queued.
        await waitFor('the reply', () =>
          of().find((e) => e.conversation.last_message?.role === 'digital_employee'),
        );
        await sdkPost(world.server, v, `/conversations/${conversation.id}/request-human`);
        const queued = await waitFor('queued', () => of().find((e) => e.conversation.queued_at));
        assert.equal(queued.conversation.last_message?.role, 'system');
      } finally {
        guest.close();
      }
      assert.equal(globexEvents.length, 0, 'another company sees nothing');

      // The REST list shows the same entry.
      const list = await world.agent.get('/inbox/conversations?status=open');
      const entry = list.body.items.find((c: { id: string }) => c.id === conversation.id);
      assert.equal(entry.last_message.role, 'system');
      assert.ok(entry.queued_at);
    });

    it('lets no visitor follow the inbox, even with an agent’s subscription token', async () => {
      const v = newVisitor(world.acmeId);
      await createConversation(world.server, v);
      const connect = await sdkPost(world.server, v, '/auth/connect-token');
      const grant = await world.agent.post('/inbox/realtime', {});
      const client = new Centrifuge(`${world.server.baseUrl.replace(/^http/, 'ws')}/connection/websocket`, {
        websocket: WebSocket,
        token: connect.body.connection_token,
      });
      clients.push(client);
      const sub = client.newSubscription(grant.body.channel, { token: grant.body.subscription_token });
      const outcome = new Promise<string>((resolve) => {
        sub.on('subscribed', () => resolve('subscribed'));
        sub.on('error', (ctx) => resolve(`error ${ctx.error.code}`));
        sub.on('unsubscribed', (ctx) => resolve(`unsubscribed ${ctx.code}`));
        // The engine may answer by closing the connection instead.
        client.on('connecting', (ctx) => ctx.code !== 0 && resolve(`connection closed ${ctx.code}`));
        client.on('disconnected', (ctx) => resolve(`disconnected ${ctx.code}`));
      });
      client.connect();
      sub.subscribe();
      const result = await outcome;
      client.disconnect();
      assert.notEqual(result, 'subscribed');
    });
  });
}

describe('inbox previews', () => {
  it('flattens markdown, names attachments and cuts long text', () => {
    const blocks = (b: unknown[]) => JSON.stringify(b);
    assert.equal(
      previewOf(blocks([{ type: 'markdown', content: '**Hi** _there_, see [docs](https://x.test)' }])),
      'Hi there, see docs',
    );
    assert.equal(previewOf(blocks([{ type: 'attachment', name: 'invoice.pdf' }])), '📎 invoice.pdf');
    assert.equal(previewOf(blocks([{ type: 'markdown', content: 'x'.repeat(300) }])).length, 140);
  });

  it('drops only the markup the widget renders: a heading loses its #, other #, _, * and > stay', () => {
    const blocks = (b: unknown[]) => JSON.stringify(b);
    assert.equal(
      previewOf(
        blocks([{ type: 'markdown', content: '## Order #42\n\nC# uses `snake_case`, 2 * 3 > 5 and *done*' }]),
      ),
      'Order #42 C# uses snake_case, 2 * 3 > 5 and done',
    );
  });
});

describe('inbox entries published in batches', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('reads the entries of every conversation changed within the window once, and publishes each latest entry once', async () => {
    const conversations = new ConversationsService(server.ctx.store.db, server.ctx.events);
    const reads: string[][] = [];
    const published: Array<{ channel: string; event: InboxEvent }> = [];
    const feed = new InboxFeed({
      db: server.ctx.store.db,
      conversations: Object.assign(Object.create(conversations), {
        findMany: (ids: string[]) => {
          reads.push([...ids]);
          return conversations.findMany(ids);
        },
      }),
      reads: { unreadCounts: async (_side, ids) => new Map(ids.map((id) => [id, 0])) },
      feedback: { csatOf: async () => new Map() },
      publish: async (channel, data) => {
        published.push({ channel, event: JSON.parse(data) as InboxEvent });
      },
      logger: createLogger('silent'),
    });
    const company = await server.ctx.companies.create('Batch Co');
    const employee = (await server.ctx.digitalEmployees.list(company.id))[0]!;
    const created = await Promise.all(
      [1, 2, 3].map(() =>
        conversations.create({ companyId: company.id, sessionId: randomUUID() }, employee.id),
      ),
    );
    const ids = created.map((c) => c.id);
    // A burst: every conversation changes twice within the window; one of them was closed.
    await conversations.close(ids[2]!);
    await Promise.all([...ids, ...ids].map((id) => feed.changed(id)));
    assert.deepEqual(reads, [ids], 'one read of the three entries');
    assert.equal(published.length, 3, 'one entry per conversation');
    assert.ok(published.every((p) => p.channel === `inbox:companies.${company.id}`));
    const closed = published.find((p) => p.event.conversation.id === ids[2]);
    // The inbox says `resolved` for a closed conversation (docs/design.md "Agent workspace").
    assert.equal(closed?.event.conversation.status, 'resolved', 'the entry as it stands now');
  });
});

describe('inbox entries of a company nobody follows', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('are neither read nor published, while a followed company gets its entries', async () => {
    const conversations = new ConversationsService(server.ctx.store.db, server.ctx.events);
    const reads: string[][] = [];
    const published: string[] = [];
    const companies = await Promise.all(
      ['Followed Co', 'Away Co'].map((n) => server.ctx.companies.create(n)),
    );
    const followedChannel = `inbox:companies.${companies[0]!.id}`;
    const feed = new InboxFeed({
      db: server.ctx.store.db,
      conversations: Object.assign(Object.create(conversations), {
        findMany: (ids: string[]) => {
          reads.push([...ids]);
          return conversations.findMany(ids);
        },
      }),
      reads: { unreadCounts: async (_side, ids) => new Map(ids.map((id) => [id, 0])) },
      feedback: { csatOf: async () => new Map() },
      publish: async (channel) => {
        published.push(channel);
      },
      followed: (channel) => channel === followedChannel,
      logger: createLogger('silent'),
    });
    const [followed, away] = await Promise.all(
      companies.map(async (company) => {
        const employee = (await server.ctx.digitalEmployees.list(company.id))[0]!;
        return conversations.create({ companyId: company.id, sessionId: randomUUID() }, employee.id);
      }),
    );
    // Told with the company (as the broadcaster does): the company nobody follows is not even queued.
    await Promise.all([
      feed.changed(followed!.id, followed!.companyId),
      feed.changed(away!.id, away!.companyId),
    ]);
    assert.deepEqual(reads, [[followed!.id]], 'only the followed company’s entry is read');
    // Told without it (the workspace's changes): read with the batch, but not published.
    await Promise.all([feed.changed(followed!.id), feed.changed(away!.id)]);
    assert.deepEqual(published, [followedChannel, followedChannel], 'only the followed channel gets entries');
  });
});
