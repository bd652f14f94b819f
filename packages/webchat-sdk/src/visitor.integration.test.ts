import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { createIdentityChannel, signVisitorToken } from '@parley/testing/webchat/identity-fixtures';
import { bearer, fetchPlatformToken } from '@parley/testing/webchat/webchat-fixtures';
import { memoryStorage } from './session-storage.ts';
import { FAST_RECONNECT, TestWebchats, Wire, waitFor } from './testing/harness.ts';

let server: TestServer;
let companyId: string;
let channelId: string;
let secret: string;
let platformToken: string;
const webchats = new TestWebchats(() => ({
  baseUrl: server.baseUrl,
  companyId,
  channelId,
  centrifuge: FAST_RECONNECT,
}));

before(async () => {
  server = await startTestServer();
  companyId = (await server.ctx.companies.create('Identity SDK Co')).id;
  ({ channelId, secret } = await createIdentityChannel(server, companyId, 'optional'));
  platformToken = await fetchPlatformToken(server, companyId, ['conversations:write']);
});

after(async () => {
  webchats.closeAll();
  await server.close();
});

const agentPost = (conversationId: string, content: string) =>
  http(
    `${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`,
    bearer(platformToken, { blocks: [{ type: 'markdown', content }] }),
  );

describe('visitor attributes', () => {
  test('the attributes option reaches the agents with the new conversation', async () => {
    const chat = await webchats.start(new Wire(), { attributes: { plan: 'gold', orders: 3, vip: true } });
    const conversation = await server.ctx.webchat.conversations.find(chat.conversation!.id);
    assert.deepEqual(conversation?.attributes, { plan: 'gold', orders: 3, vip: true });
  });
});

describe('verified visitors', () => {
  test('getVisitorToken is asked before the first call, every call carries the token, and a second device shares the conversation', async () => {
    let asked = 0;
    const wire = new Wire();
    const laptop = await webchats.start(wire, {
      getVisitorToken: async () => {
        asked++;
        return signVisitorToken(secret, 'sdk-user-1', { claims: { name: 'Ada' } });
      },
    });
    assert.equal(asked, 1, 'one token, cached for every call');
    assert.ok(laptop.identified);
    const rest = wire.events.filter((e) => e.kind === 'rest');
    assert.ok(rest.length >= 4);
    for (const call of rest) assert.match(call.headers?.['X-Visitor-Token'] ?? '', /^ey/, call.what);

    // Another device with nothing stored resumes the visitor's latest open conversation.
    const phone = await webchats.start(new Wire(), {
      visitorToken: await signVisitorToken(secret, 'sdk-user-1'),
    });
    assert.notEqual(phone.sessionId, laptop.sessionId, 'another device, another session');
    assert.equal(phone.conversation!.id, laptop.conversation!.id);
    assert.deepEqual(
      (await phone.listConversations()).map((c) => c.id),
      [laptop.conversation!.id],
    );
    await phone.send('Hello from my phone');
    const arrived = await waitFor('the phone’s message on the laptop', () =>
      laptop.messages.find((m) => m.role === 'user' && m.text === 'Hello from my phone'),
    );
    assert.deepEqual(arrived.author, { id: 'sdk-user-1', name: 'Ada' });
  });

  test('a refused token is renewed once through getVisitorToken', async () => {
    const tokens = [
      await signVisitorToken(secret, 'sdk-user-2', { expiresIn: -600 }),
      await signVisitorToken(secret, 'sdk-user-2'),
    ];
    let asked = 0;
    const chat = await webchats.start(new Wire(), { getVisitorToken: () => tokens[Math.min(asked++, 1)] });
    assert.equal(asked, 2, 'asked again after visitor_token_invalid');
    assert.equal(chat.state, 'connected');
  });

  test('identify keeps the anonymous conversation and reconnects as the visitor; resetIdentity starts anew', async () => {
    const storage = memoryStorage();
    const chat = await webchats.start(new Wire(), { storage });
    const anonymous = chat.conversation!.id;
    await chat.send('before signing in');
    await chat.identify(await signVisitorToken(secret, 'sdk-user-3'));
    assert.equal(chat.state, 'connected');
    assert.equal(chat.conversation!.id, anonymous, 'the same conversation, now the visitor’s');
    await waitFor('the earlier message', () => chat.messages.find((m) => m.text === 'before signing in'));
    const elsewhere = await webchats.start(new Wire(), {
      visitorToken: await signVisitorToken(secret, 'sdk-user-3'),
    });
    assert.ok((await elsewhere.listConversations()).some((c) => c.id === anonymous));

    const previousSession = chat.sessionId;
    await chat.resetIdentity();
    assert.equal(chat.identified, false);
    assert.notEqual(chat.sessionId, previousSession, 'a fresh anonymous session');
    assert.notEqual(chat.conversation!.id, anonymous);
    assert.ok(!(await chat.listConversations()).some((c) => c.id === anonymous));
  });
});

describe('read state, feedback and CSAT', () => {
  test('unread count and markRead, "seen" when an agent reads, thumbs and CSAT after closing', async () => {
    const chat = await webchats.start(new Wire(), {
      visitorToken: await signVisitorToken(secret, 'sdk-user-4'),
    });
    const unread: number[] = [];
    const seen: number[] = [];
    const updates: string[] = [];
    chat.on('unread', ({ count }) => unread.push(count));
    chat.on('seen', ({ position }) => seen.push(position));
    chat.on('conversation:updated', (c) => updates.push(String(c.status)));
    await waitFor('the greeting counted unread', () => chat.unreadCount === 1);
    await chat.markRead();
    assert.equal(chat.unreadCount, 0);
    assert.equal((await chat.listConversations())[0]!.unread_count, 0, 'the server has the mark');

    const conversationId = chat.conversation!.id;
    assert.equal((await agentPost(conversationId, 'An agent here.')).status, 201);
    await waitFor('the agent message and its notice unread', () => chat.unreadCount === 2);

    const sent = await chat.send('Thanks!');
    assert.equal(chat.unreadCount, 0, 'sending moves the mark');
    assert.equal(chat.isSeen(sent), false);
    const stored = await server.ctx.webchat.conversations.find(conversationId);
    await server.ctx.webchat.reads.markAgentRead(stored!);
    await waitFor('seen', () => seen.length > 0);
    const own = chat.messages.find((m) => m.text === 'Thanks!')!;
    assert.equal(chat.isSeen(own), true);
    assert.equal(chat.seenPosition, seen.at(-1));

    const agentMessage = chat.messages.find((m) => m.role === 'agent')!;
    const rated = await chat.rateMessage(agentMessage.key, 'up', 'Very helpful');
    assert.deepEqual(rated.feedback, { rating: 'up', comment: 'Very helpful' });
    await assert.rejects(
      chat.rateMessage(own.key, 'up'),
      (err: { status?: number; problemCode?: string }) =>
        err.status === 409 && err.problemCode === 'feedback_not_allowed',
    );
    await assert.rejects(
      chat.submitCsat(5),
      (err: { problemCode?: string }) => err.problemCode === 'conversation_open',
    );

    const closed = await http(
      `${server.baseUrl}/platform/v1/conversations/${conversationId}/close`,
      bearer(platformToken, {}),
    );
    assert.equal(closed.status, 200);
    await waitFor('the conversation closed', () => updates.includes('closed'));
    assert.equal(chat.conversation!.status, 'closed');
    await chat.submitCsat(4, 'Good');
    assert.deepEqual(chat.conversation!.csat, { score: 4, comment: 'Good' });
    assert.ok(unread.length > 0);
  });
});
