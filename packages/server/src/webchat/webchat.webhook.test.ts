import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  createCompanyWithConnector,
  rotateThroughApi,
} from '@parley/testing/digital-employees/responder-fixtures';
import { TestBot } from '@parley/testing/digital-employees/test-bots';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { assertStreamedReply, markdownOf } from '@parley/testing/webchat/stream-assertions';
import {
  connectToNewConversation,
  newVisitor,
  digitalEmployeeCompletes as replies,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';

// A webhook digital employee through the whole webchat: SendMessage → webhook bot (local HTTP server) → envelopes.
describe('webchat with a webhook digital employee', () => {
  let server: TestServer;
  let bot: TestBot;
  before(async () => {
    server = await startTestServer();
    bot = await TestBot.start();
  });
  after(async () => {
    await server.close();
    await bot.close();
  });

  it('streams the bot’s NDJSON deltas, and a rotated connector key takes effect on the next message', async () => {
    const oldKey = `whk_${randomUUID()}`;
    const { companyId, connectorId, employee } = await createCompanyWithConnector(
      server,
      'webhook',
      bot.url,
      oldKey,
    );
    await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
    bot.handler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      for (const delta of ['Hello ', 'from ', 'the ', 'bot.']) {
        res.write(`${JSON.stringify({ delta })}\n`);
        // The bot's own pace (so its deltas go out as separate partials), not a wait for anything.
        await new Promise((r) => setTimeout(r, 60));
      }
      res.end();
    };
    const v = newVisitor(companyId);
    const { conversation, c } = await connectToNewConversation(server, v);
    try {
      await sendMessage(c.sub, 'first question');
      await c.log.waitFor((e) => replies(e).length === 1);
      const first = replies(c.log.envelopes)[0]!;
      assert.equal(markdownOf(first), 'Hello from the bot.');
      assertStreamedReply(c.log.of(first.message_snapshot.id));
      assert.equal(bot.requests.at(-1)!.authorization, `Bearer ${oldKey}`);
      const body = bot.requests.at(-1)!.body as { conversation_id: string; message: { role: string } };
      assert.equal(body.conversation_id, conversation.id);
      assert.equal(body.message.role, 'user');

      const newKey = `whk_${randomUUID()}`;
      await rotateThroughApi(server, companyId, connectorId, newKey);
      const seenBefore = bot.requests.length;
      await sendMessage(c.sub, 'second question');
      await c.log.waitFor((e) => replies(e).length === 2);
      assert.deepEqual(
        bot.requests.slice(seenBefore).map((r) => r.authorization),
        [`Bearer ${newKey}`],
      );
      const log = server.logs.join('\n');
      assert.ok(!log.includes(oldKey) && !log.includes(newKey), 'no key in the server log');
    } finally {
      c.close();
    }
  });

  it('turns a failing bot into an error block and a system message', async () => {
    const { companyId, employee } = await createCompanyWithConnector(
      server,
      'webhook',
      bot.url,
      `whk_${randomUUID()}`,
    );
    await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
    bot.handler = (_req, res) => res.writeHead(502).end();
    const v = newVisitor(companyId);
    const { c } = await connectToNewConversation(server, v);
    try {
      await sendMessage(c.sub, 'hello?');
      await c.log.waitFor((e) => e.some((x) => x.message_snapshot.role === 'system'));
      const reply = replies(c.log.envelopes)[0]!;
      const error = reply.message_snapshot.blocks.find((b) => b.type === 'error') as { code: string };
      assert.equal(error.code, 'responder_http_error');
      assert.equal(
        c.log.envelopes.filter(
          (x) => x.message_snapshot.id === reply.message_snapshot.id && x.operation === 'complete',
        ).length,
        1,
      );
    } finally {
      c.close();
    }
  });
});
