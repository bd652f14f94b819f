import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor, waitForSettled } from '@parley/testing/wait';
import { assertStreamedReply, markdownOf } from '@parley/testing/webchat/stream-assertions';
import {
  bearer,
  connectToNewConversation,
  connectVisitor,
  createChannelWithEmployee,
  createCompanyWithSlowEmployee,
  createConversation,
  createSlowEmployee,
  digitalEmployeeCompletes as deComplete,
  fetchPlatformToken,
  listMessages,
  newCentrifugeClient,
  newVisitor,
  replyIsStreaming,
  sdkGet,
  sdkPost,
  sendMessage,
  slowEmployeeText,
} from '@parley/testing/webchat/webchat-fixtures';
import WebSocket from 'ws';

// End to end with the official centrifuge client on SQLite + the memory broker.
describe('webchat end to end (sqlite, memory broker)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('streams a reply: typing first, growing partials, one complete, rising sequences', async () => {
    const company = await server.ctx.companies.create('Stream Co');
    const v = newVisitor(company.id);
    const { c } = await connectToNewConversation(server, v);
    try {
      await sendMessage(c.sub, 'Who are you?');
      await c.log.waitFor((e) => deComplete(e).length === 1);
      const user = c.log.completed('user');
      assert.equal(user.length, 1);
      assert.equal(user[0]!.sequence, 1);
      assert.equal(markdownOf(user[0]!), 'Who are you?');
      const replyId = deComplete(c.log.envelopes)[0]!.message_snapshot.id;
      const reply = c.log.of(replyId);
      assertStreamedReply(reply);
      assert.match(markdownOf(reply.at(-1)!), /Ava/);
      assert.equal(reply[0]!.message_snapshot.author?.name, 'Ava');
      // The user message was broadcast before the reply started.
      assert.ok(c.log.envelopes.indexOf(user[0]!) < c.log.envelopes.indexOf(reply[0]!));
    } finally {
      c.close();
    }
  });

  it('coalesces partial updates: at most one partial per flush interval, however fast the deltas come', async () => {
    const { company } = await createCompanyWithSlowEmployee(server, 'Fast Co', {
      words: 120,
      delayMs: 2,
    });
    const v = newVisitor(company.id);
    const { c } = await connectToNewConversation(server, v);
    try {
      await sendMessage(c.sub, 'go');
      await c.log.waitFor((e) => deComplete(e).length === 1);
      const reply = c.log.of(deComplete(c.log.envelopes)[0]!.message_snapshot.id);
      const partials = reply.filter((e) => e.operation === 'replace' && e.sequence > 1);
      const spanMs =
        Date.parse(reply.at(-1)!.message_snapshot.updated_at) -
        Date.parse(reply[0]!.message_snapshot.created_at);
      // 120 deltas, but no more partials than 40 ms windows in the reply's lifetime (+1 for the edges).
      assert.ok(partials.length < 120, `${partials.length} partials for 120 deltas`);
      assert.ok(partials.length <= Math.ceil(spanMs / 40) + 1, `${partials.length} partials in ${spanMs} ms`);
      for (let i = 1; i < partials.length; i++) {
        const gap =
          Date.parse(partials[i]!.message_snapshot.updated_at) -
          Date.parse(partials[i - 1]!.message_snapshot.updated_at);
        assert.ok(gap >= 39, `partials ${gap} ms apart`);
      }
      assert.equal(markdownOf(reply.at(-1)!), slowEmployeeText(120));
    } finally {
      c.close();
    }
  });

  it('streams one reply at a time per conversation; messages sent meanwhile are answered in order', async () => {
    const company = await server.ctx.companies.create('Queue Co');
    const v = newVisitor(company.id);
    const { c } = await connectToNewConversation(server, v);
    try {
      await Promise.all([
        sendMessage(c.sub, 'who are you?'),
        sendMessage(c.sub, 'thanks'),
        sendMessage(c.sub, 'hello'),
      ]);
      await c.log.waitFor((e) => deComplete(e).length === 3);
      const replies = c.log.envelopes.filter((e) => e.message_snapshot.role === 'digital_employee');
      // No interleaving: each reply's envelopes are contiguous and end with its complete before the next starts.
      const order = replies.map((e) => e.message_snapshot.id).filter((id, i, all) => all.indexOf(id) === i);
      assert.equal(order.length, 3);
      const runs = replies
        .map((e) => e.message_snapshot.id)
        .filter((id, i, all) => i === 0 || all[i - 1] !== id);
      assert.deepEqual(runs, order);
      for (const id of order) assertStreamedReply(c.log.of(id));
      const texts = deComplete(c.log.envelopes).map(markdownOf);
      assert.match(texts[0]!, /Ava/);
      assert.match(texts[1]!, /welcome/);
      assert.match(texts[2]!, /^Hello!/);
    } finally {
      c.close();
    }
  });

  it('shows a user message to a second tab of the same session', async () => {
    const company = await server.ctx.companies.create('Tabs Co');
    const v = newVisitor(company.id);
    const conversation = await createConversation(server, v);
    const tab1 = await connectVisitor(server, v, conversation);
    const tab2 = await connectVisitor(server, v, conversation);
    try {
      await sendMessage(tab1.sub, 'hello from tab one');
      const seen = await tab2.log.waitFor((e) => e.some((x) => x.message_snapshot.role === 'user'));
      assert.equal(markdownOf(seen.find((x) => x.message_snapshot.role === 'user')!), 'hello from tab one');
      await tab2.log.waitFor((e) => deComplete(e).length === 1);
    } finally {
      tab1.close();
      tab2.close();
    }
  });

  it('deduplicates a retried SendMessage: one message, one reply, both publishes succeed', async () => {
    const company = await server.ctx.companies.create('Retry Co');
    const v = newVisitor(company.id);
    const { conversation, c } = await connectToNewConversation(server, v);
    try {
      const id = randomUUID();
      await sendMessage(c.sub, 'thanks', id);
      await sendMessage(c.sub, 'thanks', id);
      await c.log.waitFor((e) => deComplete(e).length >= 1);
      // A later message is answered after anything the retry could have queued (one line per conversation).
      await sendMessage(c.sub, 'one more');
      await c.log.waitFor((e) => deComplete(e).length >= 2);
      assert.deepEqual(c.log.completed('user').map(markdownOf), ['thanks', 'one more']);
      assert.equal(deComplete(c.log.envelopes).length, 2);
      const res = await listMessages(server, v, conversation.id);
      const users = res.body.messages.filter((m: { role: string }) => m.role === 'user');
      assert.equal(users.length, 2);
      assert.equal(users[0].client_message_id, id);
    } finally {
      c.close();
    }
  });

  it('rejects invalid SendMessages with documented codes and broadcasts nothing', async () => {
    const company = await server.ctx.companies.create('Invalid Co');
    const v = newVisitor(company.id);
    const { conversation, c } = await connectToNewConversation(server, v);
    try {
      const reject = async (data: unknown, code: number) => {
        await assert.rejects(c.sub.publish(data), (err: { code: number }) => err.code === code);
      };
      await reject(
        { version: 2, client_message_id: randomUUID(), blocks: [{ type: 'markdown', content: 'x' }] },
        401,
      );
      await reject(
        { version: 1, client_message_id: 'not-a-uuid', blocks: [{ type: 'markdown', content: 'x' }] },
        400,
      );
      await reject({ version: 1, client_message_id: randomUUID(), blocks: [] }, 400);
      await reject(
        { version: 1, client_message_id: randomUUID(), blocks: [{ type: 'image', url: 'x' }] },
        400,
      );
      const many = Array.from({ length: 21 }, () => ({ type: 'markdown', content: 'x' }));
      await reject({ version: 1, client_message_id: randomUUID(), blocks: many }, 413);
      await reject(
        {
          version: 1,
          client_message_id: randomUUID(),
          blocks: [{ type: 'markdown', content: 'x'.repeat(16_385) }],
        },
        413,
      );
      // A valid message sent now is broadcast after anything a refused one could have been.
      await sendMessage(c.sub, 'a valid one');
      await c.log.waitFor((e) => e.some((x) => x.message_snapshot.role === 'user'));
      assert.deepEqual(c.log.envelopes.filter((x) => x.message_snapshot.role === 'user').map(markdownOf), [
        'a valid one',
      ]);
      const res = await listMessages(server, v, conversation.id);
      assert.equal(res.body.messages.filter((m: { role: string }) => m.role === 'user').length, 1);
    } finally {
      c.close();
    }
  });

  it('isolates sessions, companies and channels: every attempt is refused', async (t) => {
    const acme = await server.ctx.companies.create('Acme');
    const globex = await server.ctx.companies.create('Globex');
    const owner = newVisitor(acme.id);
    const conversation = await createConversation(server, owner);
    const ownerClient = await connectVisitor(server, owner, conversation);
    // Closed also when an assertion fails: a client left reconnecting would keep the file's process alive.
    t.after(() => ownerClient.close());

    // Another session of the same company: no subscribe token, not in its list, no message read.
    const stranger = newVisitor(acme.id);
    assert.equal(
      (await sdkPost(server, stranger, '/auth/subscribe-token', { conversation_id: conversation.id })).status,
      404,
    );
    assert.equal((await sdkGet(server, stranger, `/conversations/${conversation.id}/messages`)).status, 404);
    assert.deepEqual((await sdkGet(server, stranger, '/conversations')).body.conversations, []);
    // The same session id presented with another company.
    const otherCompany = newVisitor(globex.id, { sessionId: owner.sessionId });
    assert.equal(
      (await sdkPost(server, otherCompany, '/auth/subscribe-token', { conversation_id: conversation.id }))
        .status,
      404,
    );

    // A stranger reusing its own valid subscription token on the owner's channel is refused by the engine.
    const own = await createConversation(server, stranger);
    const strangerToken = (await sdkPost(server, stranger, '/auth/connect-token')).body.connection_token;
    const ownSubToken = (
      await sdkPost(server, stranger, '/auth/subscribe-token', { conversation_id: own.id })
    ).body.subscription_token;
    const client = newCentrifugeClient(server, strangerToken);
    t.after(() => client.disconnect());
    const received: unknown[] = [];
    const refused = new Promise<string>((resolve) => {
      client.on('disconnected', (ctx) => resolve(`disconnected ${ctx.code}`));
      const sub = client.newSubscription(conversation.channel, { token: ownSubToken });
      sub.on('publication', (ctx) => received.push(ctx.data));
      sub.on('unsubscribed', (ctx) => resolve(`unsubscribed ${ctx.code}`));
      sub.subscribe();
    });
    client.connect();
    const outcome = await waitForSettled(refused, 15_000, 'refusal');
    assert.match(outcome, /^(disconnected 3500|unsubscribed 103)$/);
    // Publishing without a subscription is refused too (permission denied).
    const publisher = newCentrifugeClient(server, strangerToken);
    t.after(() => publisher.disconnect());
    publisher.connect();
    await waitForSettled(publisher.ready(), 10_000, 'connect');
    await assert.rejects(
      publisher.publish(conversation.channel, {
        version: 1,
        client_message_id: randomUUID(),
        blocks: [{ type: 'markdown', content: 'hi' }],
      }),
      (err: { code: number }) => err.code === 103,
    );
    await sendMessage(ownerClient.sub, 'thanks');
    await ownerClient.log.waitFor((e) => deComplete(e).length === 1);
    assert.equal(received.length, 0);
  });

  it('recovers every completed message after a reconnect mid-stream', async () => {
    const company = await server.ctx.companies.create('Recover Co');
    const employee = await createSlowEmployee(server, company.id, { words: 25, delayMs: 60 });
    const channelId = await createChannelWithEmployee(server, company.id, employee.id);
    const v = newVisitor(company.id, { channelId });
    const { conversation, c } = await connectToNewConversation(server, v);
    try {
      await sendMessage(c.sub, 'first');
      const firstReplies = await c.log.waitFor(replyIsStreaming);
      const streamingId = firstReplies.find((x) => x.message_snapshot.role === 'digital_employee')!
        .message_snapshot.id;
      // Drop the connection mid-stream.
      c.client.disconnect();
      const before = c.log.envelopes.length;

      // The REST read mid-stream shows the partial snapshot as it is now.
      const mid = await listMessages(server, v, conversation.id);
      const inflight = mid.body.messages.find((m: { id: string }) => m.id === streamingId);
      assert.equal(inflight.status, 'partial');
      assert.ok(
        inflight.blocks.some(
          (b: { type: string; content?: string }) => b.type === 'markdown' && b.content!.length > 0,
        ),
      );

      // Wait until the reply completed server-side, then have an agent-free system of record: REST says complete.
      await waitFor('the reply complete', async () => {
        const res = await listMessages(server, v, conversation.id);
        return res.body.messages.find((m: { id: string }) => m.id === streamingId)?.status === 'complete';
      });
      const recovered = new Promise<{ wasRecovering: boolean; recovered: boolean }>((resolve) =>
        c.sub.once('subscribed', resolve),
      );
      c.client.connect();
      const ctx = await waitForSettled(recovered, 15_000, 'resubscribe');
      assert.equal(ctx.wasRecovering, true);
      assert.equal(ctx.recovered, true);
      const missed = await c.log.waitFor((e) =>
        e.slice(before).some((x) => x.message_snapshot.id === streamingId && x.operation === 'complete'),
      );
      const final = missed
        .slice(before)
        .find((x) => x.message_snapshot.id === streamingId && x.operation === 'complete')!;
      assert.equal(markdownOf(final), slowEmployeeText(25));
      // Partials are not kept in history: what was recovered is only what history holds for that message.
      assert.ok(missed.slice(before).every((x) => x.operation === 'complete' || x.sequence === 1));
    } finally {
      c.close();
    }
  });

  it('REST lists this session’s conversations and pages messages with a cursor', async () => {
    const company = await server.ctx.companies.create('Paging Co');
    const v = newVisitor(company.id);
    const { conversation, c } = await connectToNewConversation(server, v);
    try {
      for (const text of ['thanks', 'hello']) {
        const done = deComplete(c.log.envelopes).length;
        await sendMessage(c.sub, text);
        await c.log.waitFor((e) => deComplete(e).length === done + 1);
      }
      // greeting + 2 × (user + reply) = 5 messages.
      const all = (await listMessages(server, v, conversation.id)).body;
      assert.equal(all.messages.length, 5);
      assert.equal(all.next_before, null);
      assert.equal(all.messages[0].role, 'digital_employee');
      const page1 = (await listMessages(server, v, conversation.id, '?limit=2')).body;
      assert.deepEqual(
        page1.messages.map((m: { id: string }) => m.id),
        all.messages.slice(3).map((m: { id: string }) => m.id),
      );
      const page2 = (await listMessages(server, v, conversation.id, `?limit=2&before=${page1.next_before}`))
        .body;
      assert.deepEqual(
        page2.messages.map((m: { id: string }) => m.id),
        all.messages.slice(1, 3).map((m: { id: string }) => m.id),
      );
      const listed = (await sdkGet(server, v, '/conversations')).body.conversations;
      assert.deepEqual(
        listed.map((x: { id: string }) => x.id),
        [conversation.id],
      );
    } finally {
      c.close();
    }
  });

  it('lets an agent post, take over and hand back; each transition is announced', async () => {
    const company = await server.ctx.companies.create('Agents Co');
    const v = newVisitor(company.id);
    const { conversation, c } = await connectToNewConversation(server, v);
    const token = await fetchPlatformToken(server, company.id, ['conversations:read', 'conversations:write']);
    const readOnly = await fetchPlatformToken(server, company.id, ['conversations:read']);
    try {
      const list = await http(`${server.baseUrl}/platform/v1/conversations`, bearer(readOnly));
      assert.equal(list.status, 200);
      assert.ok(list.body.conversations.some((x: { id: string }) => x.id === conversation.id));
      const forbidden = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
        bearer(readOnly, { blocks: [{ type: 'markdown', content: 'x' }] }),
      );
      assert.equal(forbidden.status, 403);

      const posted = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
        bearer(token, {
          blocks: [{ type: 'markdown', content: 'Hi, I am Sam from support.' }],
          author: { name: 'Sam' },
        }),
      );
      assert.equal(posted.status, 201);
      assert.equal(posted.body.role, 'agent');
      assert.equal(posted.body.status, 'complete');
      assert.equal(posted.body.author.name, 'Sam');
      await c.log.waitFor((e) => e.some((x) => x.message_snapshot.role === 'agent'));
      const system = c.log.completed('system');
      assert.equal(system.length, 1);
      assert.match(markdownOf(system[0]!), /Sam .*joined/);
      const agentEnvelope = c.log.completed('agent')[0]!;
      assert.equal(agentEnvelope.sequence, 1);

      // While the agent handles it, the digital employee stays silent.
      await sendMessage(c.sub, 'who are you?');
      const [asked] = await c.log
        .waitFor((e) => e.some((x) => x.message_snapshot.role === 'user'))
        .then((e) => e.filter((x) => x.message_snapshot.role === 'user'));
      // A reply is queued in the same transaction as the message it answers (conversations/conversation-engine.ts),
      // so none queued now means none will ever come.
      const jobs = await server.ctx.store.db
        .selectFrom('reply_jobs')
        .select('message_id')
        .where('message_id', '=', asked!.message_snapshot.id)
        .execute();
      assert.deepEqual(jobs, [], 'no reply queued while the agent handles the conversation');
      assert.equal(c.log.envelopes.filter((x) => x.message_snapshot.role === 'digital_employee').length, 0);

      const back = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/handback`,
        bearer(token, {}),
      );
      assert.equal(back.status, 200);
      assert.equal(back.body.handled_by, 'digital_employee');
      await c.log.waitFor((e) => e.filter((x) => x.message_snapshot.role === 'system').length === 2);
      await sendMessage(c.sub, 'who are you?');
      await c.log.waitFor((e) => deComplete(e).length === 1);

      const handover = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/handover`,
        bearer(token, { author: { name: 'Kim' } }),
      );
      assert.equal(handover.status, 200);
      assert.equal(handover.body.handled_by, 'agent');
      await c.log.waitFor((e) => e.filter((x) => x.message_snapshot.role === 'system').length === 3);
      const other = await server.ctx.companies.create('Other Co');
      const otherToken = await fetchPlatformToken(server, other.id, ['conversations:write']);
      const cross = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
        bearer(otherToken, { blocks: [{ type: 'markdown', content: 'x' }] }),
      );
      assert.equal(cross.status, 404);
    } finally {
      c.close();
    }
  });
});

describe('webchat handover mid-reply', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('stops a streaming reply when an agent takes over: complete with reply_interrupted, then the notice', async () => {
    const { company } = await createCompanyWithSlowEmployee(server, 'Takeover Co', {
      words: 40,
      delayMs: 100,
    });
    const v = newVisitor(company.id);
    const { conversation, c } = await connectToNewConversation(server, v);
    const token = await fetchPlatformToken(server, company.id, ['conversations:write']);
    try {
      await sendMessage(c.sub, 'tell me everything');
      await c.log.waitFor(replyIsStreaming);
      const res = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversation.id}/handover`,
        bearer(token, { author: { name: 'Lee' } }),
      );
      assert.equal(res.status, 200);
      await c.log.waitFor(
        (e) => deComplete(e).length === 1 && e.some((x) => x.message_snapshot.role === 'system'),
      );
      const reply = deComplete(c.log.envelopes)[0]!;
      assert.equal((reply.message_snapshot.blocks.at(-1) as { code: string }).code, 'reply_interrupted');
      assert.ok(markdownOf(reply).startsWith('word1'));
      assert.ok(!markdownOf(reply).includes('word40'), 'the reply stopped early');
      assert.match(markdownOf(c.log.completed('system')[0]!), /Lee/);
    } finally {
      c.close();
    }
  });
});

describe('webchat responder failure', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ config: { webchat: { responderTimeoutMs: 400 } } });
  });
  after(() => server.close());

  it('ends a timed-out reply with an error block and a system message, never a hanging partial', async () => {
    const company = await server.ctx.companies.create('Timeout Co');
    const employee = await createSlowEmployee(server, company.id, { words: 20, delayMs: 150 });
    const channelId = await createChannelWithEmployee(server, company.id, employee.id);
    const v = newVisitor(company.id, { channelId });
    const { conversation, c } = await connectToNewConversation(server, v);
    try {
      await sendMessage(c.sub, 'anything');
      await c.log.waitFor((e) => e.some((x) => x.message_snapshot.role === 'system'));
      const reply = c.log.envelopes.filter((x) => x.message_snapshot.role === 'digital_employee');
      const last = reply.at(-1)!;
      assert.equal(last.operation, 'complete');
      assert.equal(reply.filter((x) => x.operation === 'complete').length, 1);
      const error = last.message_snapshot.blocks.find((b) => b.type === 'error') as {
        code: string;
        message: string;
      };
      assert.equal(error.code, 'responder_timeout');
      assert.ok(error.message.length > 0);
      // What streamed before the failure is kept.
      assert.match(markdownOf(last), /^word1 /);
      const res = await listMessages(server, v, conversation.id);
      assert.ok(res.body.messages.every((m: { status: string }) => m.status === 'complete'));
      assert.equal(res.body.messages.at(-1).role, 'system');
    } finally {
      c.close();
    }
  });
});

describe('webchat abuse limits and WebSocket origins', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ config: { webchat: { messagesPerMinutePerSession: 2 } } });
  });
  after(() => server.close());

  it('refuses a publish over the per-session message limit with code 429, broadcasting nothing', async () => {
    const company = await server.ctx.companies.create('Chatty Co');
    const v = newVisitor(company.id);
    const { conversation, c } = await connectToNewConversation(server, v);
    try {
      await sendMessage(c.sub, 'one');
      await sendMessage(c.sub, 'two');
      await assert.rejects(sendMessage(c.sub, 'three'), (err: { code: number }) => err.code === 429);
      // Refused before it was stored: the history never holds it, and the replies to the first two (which come
      // after the refusal) find the channel without it.
      const users = (await listMessages(server, v, conversation.id)).body.messages.filter(
        (m: { role: string }) => m.role === 'user',
      );
      assert.equal(users.length, 2);
      await c.log.waitFor((e) => deComplete(e).length === 2);
      assert.deepEqual(c.log.completed('user').map(markdownOf), ['one', 'two']);
    } finally {
      c.close();
    }
  });

  it("accepts a WebSocket only from the channel's or company's allowed origins", async () => {
    const company = await server.ctx.companies.create('Origin Co');
    await server.ctx.companies.setAllowedOrigins(company.id, ['https://shop.example']);
    const allowed = newVisitor(company.id, { origin: 'https://shop.example' });
    const conversation = await createConversation(server, allowed);
    const ok = await connectVisitor(server, allowed, conversation, { origin: 'https://shop.example' });
    ok.close();

    // A page on another origin that got hold of a valid token still cannot connect.
    const token = (
      await sdkPost(server, newVisitor(company.id, { sessionId: allowed.sessionId }), '/auth/connect-token')
    ).body.connection_token;
    class EvilSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { origin: 'https://evil.example' });
      }
    }
    const client = newCentrifugeClient(server, token, EvilSocket);
    const outcome = new Promise<number>((resolve) => client.on('disconnected', (ctx) => resolve(ctx.code)));
    client.connect();
    try {
      assert.equal(await waitForSettled(outcome, 15_000, 'refusal'), 4503);
    } finally {
      client.disconnect();
    }
  });
});
