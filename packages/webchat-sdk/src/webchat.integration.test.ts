import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadTokenSecret } from '@parley/server/internal/webchat/realtime/token-secret';
import { RealtimeTokenSigner } from '@parley/server/internal/webchat/realtime/tokens';
import { createTestClient, fetchToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { type KeyValueStorage, memoryStorage } from './session-storage.ts';
import { FAST_RECONNECT, TestWebchats, Wire, waitFor } from './testing/harness.ts';
import type { ChatMessage } from './transcript.ts';
import type { Webchat } from './webchat.ts';

let server: TestServer;
let companyId: string;
const webchats = new TestWebchats(() => ({ baseUrl: server.baseUrl, companyId, centrifuge: FAST_RECONNECT }));

before(async () => {
  server = await startTestServer();
  companyId = (await server.ctx.companies.create('Acme')).id;
});

after(async () => {
  webchats.closeAll();
  await server.close();
});

const replyAfter = (chat: Webchat, count: number) =>
  waitFor(`${count} completed digital-employee messages`, () => {
    const done = chat.messages.filter((m) => m.role === 'digital_employee' && m.status === 'complete');
    return done.length >= count ? done : undefined;
  });

/** Makes the server look like one from before `realtime_tokens`: the new conversation comes without tokens. */
const withoutCreationTokens = (wire: Wire) => {
  wire.rewriteResponse = (what, body) => {
    if (what !== 'POST /sdk/v1/conversations') return undefined;
    const { realtime_tokens: _dropped, ...rest } = body;
    return rest;
  };
};

/** Opening a chat with one request (WebchatOptions.tokensWithConversation). */
const oneRequest = { tokensWithConversation: true };

describe('setup order and session context', () => {
  test('with tokensWithConversation one request opens a chat: the new conversation carries both tokens; connect, then subscribe', async () => {
    const wire = new Wire();
    const chat = await webchats.start(wire, oneRequest);
    const create = wire.events.find((e) => e.kind === 'rest' && e.what === 'POST /sdk/v1/conversations');
    assert.equal((create!.body as { realtime_tokens?: unknown }).realtime_tokens, true);
    assert.deepEqual(
      wire
        .timeline()
        .filter((step) =>
          [
            'POST /sdk/v1/conversations',
            'POST /sdk/v1/auth/connect-token',
            'ws connect',
            'POST /sdk/v1/auth/subscribe-token',
            'ws subscribe',
          ].includes(step),
        ),
      ['POST /sdk/v1/conversations', 'ws connect', 'ws subscribe'],
    );
    const subscribe = wire.sent('subscribe')[0]!.subscribe as { channel: string; token: string };
    assert.equal(subscribe.channel, chat.conversation!.channel);
    assert.ok(subscribe.token.split('.').length === 3, 'subscribe carries the subscription JWT');
    assert.ok((wire.sent('connect')[0]!.connect as { token?: string }).token, 'connect carries a JWT');
    // The conversation the SDK hands out does not carry the tokens.
    assert.equal((chat.conversation as { realtime_tokens?: unknown }).realtime_tokens, undefined);
    assert.equal(chat.state, 'connected');
    await chat.send('hello');
    await replyAfter(chat, 1);
  });

  test('by default the spec’s setup order: conversation, connection token, connect, subscription token, subscribe', async () => {
    const wire = new Wire();
    const chat = await webchats.start(wire);
    const create = wire.events.find((e) => e.kind === 'rest' && e.what === 'POST /sdk/v1/conversations');
    assert.equal(
      (create!.body as { realtime_tokens?: unknown }).realtime_tokens,
      undefined,
      'no tokens asked for',
    );
    const order = wire
      .timeline()
      .filter((step) =>
        [
          'POST /sdk/v1/conversations',
          'POST /sdk/v1/auth/connect-token',
          'ws connect',
          'POST /sdk/v1/auth/subscribe-token',
          'ws subscribe',
        ].includes(step),
      );
    assert.deepEqual(order, [
      'POST /sdk/v1/conversations',
      'POST /sdk/v1/auth/connect-token',
      'ws connect',
      'POST /sdk/v1/auth/subscribe-token',
      'ws subscribe',
    ]);
    // Every REST call carries the session context headers; the tokens go into the frames unchanged.
    for (const call of wire.events.filter((e) => e.kind === 'rest')) {
      assert.equal(call.headers?.['X-Session-Id'], chat.sessionId);
      assert.equal(call.headers?.['X-Company'], companyId);
    }
    const subscribe = wire.sent('subscribe')[0]!.subscribe as { channel: string; token: string };
    assert.equal(subscribe.channel, chat.conversation!.channel);
    assert.equal(subscribe.channel, `messages:companies.${companyId}.conversations.${chat.conversation!.id}`);
    assert.ok(subscribe.token.split('.').length === 3, 'subscribe carries the subscription JWT');
    assert.ok(
      (wire.sent('connect')[0]!.connect as { token?: string }).token,
      'connect carries the connection JWT',
    );
    assert.equal(chat.state, 'connected');
  });

  test('tokensWithConversation with a server that sends no tokens: it asks connect-token and subscribe-token', async () => {
    const wire = new Wire();
    withoutCreationTokens(wire);
    const chat = await webchats.start(wire, oneRequest);
    assert.deepEqual(
      wire.rest().filter((r) => r.startsWith('POST /sdk/v1/')),
      ['POST /sdk/v1/conversations', 'POST /sdk/v1/auth/connect-token', 'POST /sdk/v1/auth/subscribe-token'],
    );
    assert.equal(chat.state, 'connected');
  });

  test('with a channel id, X-Channel-Id goes on every call and the list is that channel’s', async () => {
    const employee = await server.ctx.digitalEmployees.getDefault(companyId);
    const { ChannelsService } = await import('@parley/server/internal/webchat/channels/channels.service');
    const channel = await new ChannelsService(server.ctx.store.db, server.ctx.store.dialect).create({
      companyId,
      name: 'Shop',
      digitalEmployeeId: employee.id,
    });
    const storage = memoryStorage();
    const wire = new Wire();
    const inChannel = await webchats.start(wire, { storage, channelId: channel.id });
    const elsewhere = await webchats.start(new Wire(), { storage }); // same session, no channel
    assert.equal(inChannel.sessionId, elsewhere.sessionId);
    for (const call of wire.events.filter((e) => e.kind === 'rest'))
      assert.equal(call.headers?.['X-Channel-Id'], channel.id);
    const listed = (await inChannel.listConversations()).map((c) => c.id);
    assert.deepEqual(listed, [inChannel.conversation!.id]);
    const all = (await elsewhere.listConversations()).map((c) => c.id);
    assert.ok(all.includes(inChannel.conversation!.id) && all.includes(elsewhere.conversation!.id));
  });

  test('a reload (same storage) resumes the same session and conversation with its messages', async () => {
    const storage: KeyValueStorage = memoryStorage();
    const first = await webchats.start(new Wire(), { storage });
    await first.send('Who are you?');
    await replyAfter(first, 2); // greeting + answer
    const before = first.messages.map((m) => [m.id, m.role, m.text]);
    first.close();

    const wire = new Wire();
    const second = await webchats.start(wire, { storage });
    assert.equal(second.sessionId, first.sessionId);
    assert.equal(second.conversation!.id, first.conversation!.id);
    assert.ok(!wire.rest().includes('POST /sdk/v1/conversations'), 'no new conversation on resume');
    assert.deepEqual(
      second.messages.map((m) => [m.id, m.role, m.text]),
      before,
    );
  });
});

describe('history', () => {
  test('loadOlder pages back to the first message, keeping one order', async () => {
    const storage = memoryStorage();
    const first = await webchats.start(new Wire(), { storage });
    await first.send('Who are you?');
    await replyAfter(first, 2);
    await first.send('What can you do?');
    await replyAfter(first, 3);
    const all = first.messages.map((m) => m.id);
    assert.equal(all.length, 5);
    first.close();

    const paged = await webchats.start(new Wire(), { storage, pageSize: 2 });
    assert.deepEqual(
      paged.messages.map((m) => m.id),
      all.slice(3),
    );
    assert.equal(paged.canLoadOlder, true);
    assert.equal(await paged.loadOlder(), 2);
    assert.deepEqual(
      paged.messages.map((m) => m.id),
      all.slice(1),
    );
    assert.equal(await paged.loadOlder(), 1);
    assert.deepEqual(
      paged.messages.map((m) => m.id),
      all,
    );
    assert.equal(paged.canLoadOlder, false);
  });

  test('switching conversations: a new one starts empty but greeted, the earlier one opens with its messages', async () => {
    const chat = await webchats.start(new Wire());
    await chat.send('Who are you?');
    await replyAfter(chat, 2);
    const firstId = chat.conversation!.id;
    const firstTexts = chat.messages.map((m) => m.text);
    const second = await chat.startNewConversation();
    await replyAfter(chat, 1);
    assert.notEqual(second.id, firstId);
    assert.equal(chat.messages.length, 1, 'only the greeting');
    const listed = (await chat.listConversations()).map((c) => c.id);
    assert.ok(listed.includes(firstId) && listed.includes(second.id));
    await chat.openConversation(firstId);
    assert.deepEqual(
      chat.messages.map((m) => m.text),
      firstTexts,
    );
    await chat.send('What can you do?');
    await replyAfter(chat, 3);
    assert.equal(chat.conversation!.id, firstId);
  });
});

describe('streaming and events', () => {
  test('a reply shows typing, grows through partial snapshots, then completes once', async () => {
    const chat = await webchats.start(new Wire());
    await replyAfter(chat, 1); // the greeting
    const seen: Array<{ event: string; message: ChatMessage }> = [];
    const typing: boolean[] = [];
    chat.on('message:added', (message) => seen.push({ event: 'added', message }));
    chat.on('message:updated', (message) => seen.push({ event: 'updated', message }));
    chat.on('message:completed', (message) => seen.push({ event: 'completed', message }));
    chat.on('typing', (change) => typing.push(change.typing));

    const sent = await chat.send('What can you do?');
    assert.ok(sent.status === 'sent' || sent.status === 'complete');
    const [, reply] = await replyAfter(chat, 2);
    const replyEvents = seen.filter((e) => e.message.key === reply!.key);
    assert.equal(replyEvents.filter((e) => e.event === 'completed').length, 1);
    const partialTexts = replyEvents.filter((e) => e.message.status === 'partial').map((e) => e.message.text);
    assert.ok(partialTexts.length >= 2, `streamed in several partials (got ${partialTexts.length})`);
    for (let i = 1; i < partialTexts.length; i++)
      assert.ok(partialTexts[i]!.length >= partialTexts[i - 1]!.length, 'text only grows');
    assert.ok(reply!.text.startsWith('I can answer common questions'), reply!.text);
    assert.deepEqual(typing, [true, false], 'typing indicator shown before text, then cleared');
    // One order for everyone: greeting, the visitor's message, the reply.
    assert.deepEqual(
      chat.messages.map((m) => m.role),
      ['digital_employee', 'user', 'digital_employee'],
    );
  });
});

describe('typing', () => {
  const typingFrames = (wire: Wire) =>
    wire
      .sent('publish')
      .filter((frame) => (frame.publish as { data?: { event?: string } }).data?.event === 'typing');

  test('typing() publishes once however often it is called, and nothing while not connected (nor later)', async () => {
    const wire = new Wire();
    const chat = await webchats.start(wire);
    wire.offline = true;
    wire.dropConnections();
    await waitFor('the connection to drop', () => chat.state !== 'connected');
    assert.doesNotThrow(() => {
      for (let i = 0; i < 5; i++) chat.typing();
    });
    wire.offline = false;
    await waitFor('the reconnect', () => chat.state === 'connected');
    // A message sent after reconnecting goes out after anything queued while offline would have.
    await chat.send('back online');
    assert.deepEqual(typingFrames(wire), [], 'typing while offline is dropped, not queued');

    for (let i = 0; i < 10; i++) chat.typing();
    await chat.send('after typing');
    const publishes = wire.sent('publish').map((frame) => frame.publish as { data: { event?: string } });
    assert.equal(typingFrames(wire).length, 1, 'ten calls within 3 s publish one typing');
    assert.equal(publishes.at(-2)?.data.event, 'typing', 'published at the first call, before the message');

    chat.close();
    assert.doesNotThrow(() => chat.typing());
    assert.equal(typingFrames(wire).length, 1, 'nothing after close');
  });
});

describe('token renewal', () => {
  const signer = () =>
    new RealtimeTokenSigner(loadTokenSecret(server.config.webchat.tokenSecret, server.dataDir).secret);
  const secondsAgo = (s: number) => Math.floor(Date.now() / 1000) - s;
  const sessionOf = (headers: Record<string, string> | undefined) => headers?.['X-Session-Id'] ?? '';
  /**
   * Replaces one realtime token that comes with the new conversation by one `sign` makes for its session and
   * conversation channel; renewals then come from the token routes.
   */
  const replaceCreationToken = (
    wire: Wire,
    field: 'connection_token' | 'subscription_token',
    sign: (session: string, channel: string) => string,
  ) => {
    wire.rewriteResponse = (what, body) => {
      if (what !== 'POST /sdk/v1/conversations') return undefined;
      const session = sessionOf(wire.events.find((e) => e.kind === 'rest')?.headers);
      const tokens = body.realtime_tokens as Record<string, unknown>;
      return { ...body, realtime_tokens: { ...tokens, [field]: sign(session, String(body.channel)) } };
    };
  };
  /** The connection token that comes with the new conversation, issued `issuedSecondsAgo` (lifetime 900 s). */
  const backdateFirstConnectToken = (wire: Wire, issuedSecondsAgo: number) =>
    replaceCreationToken(wire, 'connection_token', (session) =>
      signer().connectionToken(
        session,
        { company_id: companyId, channel_id: null },
        secondsAgo(issuedSecondsAgo),
      ),
    );
  /** The same for the subscription token that comes with the new conversation (lifetime 24 h). */
  const backdateFirstSubscriptionToken = (wire: Wire, issuedSecondsAgo: number) =>
    replaceCreationToken(wire, 'subscription_token', (session, channel) =>
      signer().subscriptionToken(session, channel, secondsAgo(issuedSecondsAgo)),
    );

  test('an expired connection token gets 109 and getToken fetches a new one', async () => {
    const wire = new Wire();
    // Expired 100 s ago: the engine must refuse it with 109, which makes centrifuge call getToken again.
    backdateFirstConnectToken(wire, 1000);
    const chat = await webchats.start(wire, oneRequest);
    assert.equal(chat.state, 'connected');
    assert.equal(wire.rest().filter((r) => r === 'POST /sdk/v1/auth/connect-token').length, 1);
    assert.ok(
      wire.events.some((e) => e.kind === 'receive' && e.what === 'error:109'),
      'the engine answered 109',
    );
  });

  test('a connection token about to expire is refreshed on the same connection (refresh command)', async () => {
    const wire = new Wire();
    // Issued 898 s ago with the 900 s lifetime: it expires in 2 s, so the connect reply says ttl ≈ 2.
    backdateFirstConnectToken(wire, 898);
    const chat = await webchats.start(wire, oneRequest);
    await waitFor('a refresh command', () => wire.sent('refresh').length > 0);
    assert.equal(wire.sent('connect').length, 1, 'renewed without reconnecting');
    assert.equal(wire.rest().filter((r) => r === 'POST /sdk/v1/auth/connect-token').length, 1);
    await chat.send('still here?');
    assert.equal(chat.state, 'connected');
  });

  test('an expiring subscription token is renewed with sub_refresh; an expired one with 109 + getToken', async () => {
    const wire = new Wire();
    backdateFirstSubscriptionToken(wire, 86_398);
    const chat = await webchats.start(wire, oneRequest);
    await waitFor('a sub_refresh command', () => wire.sent('sub_refresh').length > 0);
    assert.equal(wire.sent('subscribe').length, 1, 'renewed without resubscribing');
    assert.equal(wire.rest().filter((r) => r === 'POST /sdk/v1/auth/subscribe-token').length, 1);
    assert.equal(chat.state, 'connected');

    const expired = new Wire();
    backdateFirstSubscriptionToken(expired, 90_000);
    const second = await webchats.start(expired, oneRequest);
    assert.equal(second.state, 'connected');
    assert.ok(
      expired.events.some((e) => e.kind === 'receive' && e.what === 'error:109'),
      'the engine answered 109',
    );
    assert.equal(expired.rest().filter((r) => r === 'POST /sdk/v1/auth/subscribe-token').length, 1);
  });
});

describe('sending', () => {
  test('a send made while offline is pending at once and delivered once after reconnect', async () => {
    const wire = new Wire();
    const chat = await webchats.start(wire);
    await replyAfter(chat, 1);
    wire.offline = true;
    wire.dropConnections();
    await waitFor('the connection to drop', () => chat.state !== 'connected');
    const sending = chat.send('sent while offline');
    const pending = chat.messages.at(-1)!;
    assert.equal(pending.status, 'pending');
    assert.equal(pending.text, 'sent while offline');
    // A reconnect attempt failed with the send waiting on it: the send is still pending, not failed.
    const attempts = wire.offlineAttempts;
    await waitFor('a failed reconnect attempt', () => wire.offlineAttempts > attempts);
    assert.equal(chat.messages.at(-1)!.status, 'pending', 'still pending while offline, not failed');
    wire.offline = false;
    const sent = await sending;
    assert.ok(sent.status === 'sent' || sent.status === 'complete');
    await replyAfter(chat, 2);
    const stored = (await chat.rest.listMessages(chat.conversation!.id)).messages.filter(
      (m) => m.role === 'user',
    );
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.client_message_id, pending.clientMessageId);
  });

  test('a publish whose reply was lost is retried with the same client_message_id and stored once', async () => {
    const wire = new Wire();
    const chat = await webchats.start(wire);
    await replyAfter(chat, 1);
    let armed = true;
    // The publish reaches the server, then the connection dies before its reply arrives.
    wire.onSend = (frame) => {
      if (armed && 'publish' in frame) {
        armed = false;
        return 'close';
      }
      return undefined;
    };
    const message = await chat.send('Can I talk to a human?');
    await replyAfter(chat, 2);
    const publishes = wire
      .sent('publish')
      .map((f) => (f.publish as { data: { client_message_id: string } }).data.client_message_id);
    assert.ok(publishes.length >= 2, `published again after reconnect (${publishes.length} publishes)`);
    assert.ok(
      publishes.every((id) => id === message.clientMessageId),
      'every attempt used the same client_message_id',
    );
    const stored = (await chat.rest.listMessages(chat.conversation!.id)).messages.filter(
      (m) => m.role === 'user',
    );
    assert.equal(stored.length, 1, 'the server stored it once');
    assert.equal(chat.messages.filter((m) => m.role === 'user').length, 1, 'the SDK shows it once');
    assert.equal(chat.messages.filter((m) => m.role === 'user')[0]!.status, 'complete');
  });

  test('a send answered 503 (temporary) for longer than a few attempts stays pending, then goes through once', async () => {
    const wire = new Wire();
    const chat = await webchats.start(wire, { sendRetryDelayMs: 20 });
    await replyAfter(chat, 1);
    // What a client sees while the server's broker is down: the message is stored, its broadcast never arrives,
    // and the publish is answered 503 temporary — here eight times in a row.
    const publishIds = new Set<number>();
    wire.onSend = (frame) => {
      if ('publish' in frame) publishIds.add(frame.id as number);
      return undefined;
    };
    let refusals = 8;
    wire.rewriteReceived = (frame) => {
      const pub = (frame.push as { pub?: { data?: { message_snapshot?: { role?: string } } } } | undefined)
        ?.pub;
      if (refusals > 0 && pub?.data?.message_snapshot?.role === 'user') return null;
      if (publishIds.has(frame.id as number) && refusals-- > 0) {
        return { id: frame.id, error: { code: 503, message: 'broker_unavailable', temporary: true } };
      }
      return frame;
    };
    const sent = await chat.send('still there?');
    assert.ok(sent.status === 'sent' || sent.status === 'complete', sent.status);
    const attempts = wire
      .sent('publish')
      .filter(
        (f) =>
          (f.publish as { data: { client_message_id: string } }).data.client_message_id ===
          sent.clientMessageId,
      );
    assert.equal(attempts.length, 9, 'retried past the refusals, never given up');
    const stored = (await chat.rest.listMessages(chat.conversation!.id)).messages.filter(
      (m) => m.role === 'user',
    );
    assert.equal(stored.length, 1, 'stored once');
  });

  test('a send the server refuses is marked failed with an event, and retry() sends it again', async () => {
    const chat = await webchats.start(new Wire());
    const failures: ChatMessage[] = [];
    chat.on('send:failed', ({ message }) => failures.push(message));
    const tooLong = 'x'.repeat(server.config.webchat.maxMessageBytes + 1);
    await assert.rejects(chat.send(tooLong), (err: { code?: string }) => err.code === 'send_failed');
    assert.equal(failures.length, 1);
    const failed = chat.messages.find((m) => m.key === failures[0]!.key)!;
    assert.equal(failed.status, 'failed');
    assert.ok(failed.sendError?.code, 'the refusal code is kept');
    // Retrying the same refused content fails again (visibly), never silently.
    await assert.rejects(chat.retry(failed.key), (err: { code?: string }) => err.code === 'send_failed');
    assert.equal(failures.length, 2);
  });
});

describe('reconciliation', () => {
  test('after a reconnect the engine cannot recover, REST fills the gap: nothing missing, nothing twice', async () => {
    const client = await createTestClient(
      server.ctx,
      ['conversations:write', 'conversations:read'],
      companyId,
    );
    const token = await fetchToken(server, client);
    const wire = new Wire();
    const chat = await webchats.start(wire);
    await replyAfter(chat, 1);
    const reconciled: Array<{ added: number }> = [];
    chat.on('reconciled', (counts) => reconciled.push(counts));

    wire.offline = true;
    wire.dropConnections();
    await waitFor('the connection to drop', () => chat.state !== 'connected');
    // More than the 100 publications the channel keeps: recovery from the old offset is impossible.
    const missed = 105;
    for (let i = 1; i <= missed; i++) {
      const response = await fetch(
        `${server.baseUrl}/platform/v1/conversations/${chat.conversation!.id}/messages`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            blocks: [{ type: 'markdown', content: `agent note ${i}` }],
            author: { name: 'Sam' },
          }),
        },
      );
      assert.equal(response.status, 201);
    }
    wire.offline = false;
    await waitFor('REST reconciliation', () => reconciled.length > 0, 30_000);
    const subscribedReplies = wire.events.filter(
      (e) => e.kind === 'receive' && e.frame && 'subscribe' in e.frame,
    );
    const last = subscribedReplies.at(-1)!.frame!.subscribe as {
      was_recovering?: boolean;
      recovered?: boolean;
    };
    assert.equal(last.was_recovering, true);
    assert.notEqual(last.recovered, true, 'the engine reported the position unrecoverable');

    const agentTexts = chat.messages.filter((m) => m.role === 'agent').map((m) => m.text);
    assert.equal(agentTexts.length, missed, 'every missed message is there');
    assert.equal(new Set(agentTexts).size, missed, 'none twice');
    assert.deepEqual(
      agentTexts,
      Array.from({ length: missed }, (_, i) => `agent note ${i + 1}`),
      'in order',
    );
    assert.equal(new Set(chat.messages.map((m) => m.id)).size, chat.messages.length);
  });
});

describe('transport fallback', () => {
  test('uses WebSocket when it opens, and says so', async () => {
    const chat = await webchats.start(new Wire());
    assert.equal(chat.transport, 'websocket');
  });

  test('falls back to HTTP-streaming when a WebSocket cannot be opened, and chats over it', async () => {
    const wire = new Wire();
    const chat = await webchats.start(wire, {
      // Nothing listens there: the WebSocket fails to open, as behind a proxy that blocks it.
      realtimeUrl: 'ws://127.0.0.1:1/connection/websocket',
    });
    assert.equal(chat.transport, 'http_stream');
    await replyAfter(chat, 1); // the greeting, delivered over the stream
    const sent = await chat.send('Who are you?');
    assert.ok(['sent', 'complete'].includes(sent.status));
    const done = await replyAfter(chat, 2);
    assert.ok(done.at(-1)!.text.length > 0);
  });
});
