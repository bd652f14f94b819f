import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitForSettled } from '@parley/testing/wait';
import {
  connectVisitor,
  createCompanyWithSlowEmployee,
  createConversation,
  listMessages,
  newVisitor,
  replyIsStreaming,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import type { MessageEnvelope } from './messages/message.ts';

// The spec's channel history is "100 messages retained for 1 hour": a client that was away recovers the last 100
// messages, each in its latest state — and one that joins mid-reply learns of the reply still streaming.
describe('webchat history and catch-up', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('a client that was away recovers the last 100 messages, each once and complete', async () => {
    const { company } = await createCompanyWithSlowEmployee(server, 'History Co', {
      words: 3,
      delayMs: 0,
    });
    const v = newVisitor(company.id);
    const conversation = await createConversation(server, v);
    const away = await connectVisitor(server, v, conversation);
    const talker = await connectVisitor(server, v, conversation);
    try {
      away.client.disconnect();
      // 50 exchanges while it is away: 100 messages (a user message and a streamed reply each).
      for (let i = 1; i <= 50; i++) {
        await sendMessage(talker.sub, `question ${i}`);
        await talker.log.waitFor((e) => e.filter(isCompleteReply).length >= i, 15_000, `reply ${i}`);
      }
      const before = away.log.envelopes.length;
      const resubscribed = new Promise<{ recovered: boolean }>((resolve) =>
        away.sub.once('subscribed', resolve),
      );
      away.client.connect();
      const ctx = await waitForSettled(resubscribed, 15_000, 'resubscribe');
      assert.equal(ctx.recovered, true, 'the position is still in history');
      const recovered = await away.log.waitFor(
        (e) => e.length - before >= 100,
        15_000,
        'the recovered messages',
      );
      const missed = recovered.slice(before);
      assert.ok(
        missed.every((e) => e.operation === 'complete'),
        'each in its final state',
      );
      const ids = missed.map((e) => e.message_snapshot.id);
      assert.equal(new Set(ids).size, ids.length, 'each message once');
      const { body } = await listMessages(server, v, conversation.id, '?limit=100');
      assert.deepEqual(
        ids,
        body.messages.map((m: { id: string }) => m.id),
        'exactly the conversation’s last 100 messages, in order',
      );
    } finally {
      away.close();
      talker.close();
    }
  });

  it('a client subscribing mid-reply gets the reply in the subscribe result, then its live envelopes', async () => {
    const { company } = await createCompanyWithSlowEmployee(server, 'Join Co', {
      words: 30,
      delayMs: 50,
    });
    const v = newVisitor(company.id);
    const conversation = await createConversation(server, v);
    const first = await connectVisitor(server, v, conversation);
    let late: Awaited<ReturnType<typeof connectVisitor>> | undefined;
    try {
      await sendMessage(first.sub, 'tell me');
      await first.log.waitFor(replyIsStreaming);
      late = await connectVisitor(server, v, conversation);
      const data = late.subscribedData[0] as { in_flight: MessageEnvelope[] };
      assert.equal(data.in_flight.length, 1);
      const inFlight = data.in_flight[0]!;
      assert.equal(inFlight.message_snapshot.status, 'partial');
      assert.ok(inFlight.sequence >= 2, 'the live sequence of the streaming node');
      const done = await late.log.waitFor((e) => e.some(isCompleteReply));
      const complete = done.find(isCompleteReply)!;
      assert.equal(complete.message_snapshot.id, inFlight.message_snapshot.id);
      assert.ok(complete.sequence > inFlight.sequence);
    } finally {
      first.close();
      late?.close();
    }
  });
});

const isCompleteReply = (e: MessageEnvelope) =>
  e.operation === 'complete' && e.message_snapshot.role === 'digital_employee';
