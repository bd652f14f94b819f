import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { createCompanyWithConnector } from '@parley/testing/digital-employees/responder-fixtures';
import { TestBot } from '@parley/testing/digital-employees/test-bots';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import {
  bearer,
  type ConnectedVisitor,
  connectToNewConversation,
  digitalEmployeeCompletes,
  fetchPlatformToken,
  listMessages,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import type { Subscription } from 'centrifuge';
import type { MessageEnvelope } from '../messages/message.ts';

// Interactive blocks end to end (docs/design.md "Interactive blocks") over real HTTP and the official `centrifuge`
// client: bots and agents offer quick replies and cards, the visitor answers with a postback.

const QUICK = {
  type: 'quick_replies',
  options: [
    { id: 'track', label: 'Track my order' },
    { id: 'human', label: 'Talk to a human' },
  ],
};
const CARD = {
  type: 'card',
  title: 'Blue shoes',
  text: 'Size 42, in stock.',
  image_url: 'https://shop.example/shoes.png',
  buttons: [
    { id: 'buy', label: 'Buy now' },
    { id: 'details', label: 'Details', url: 'https://shop.example/shoes' },
  ],
};

const postback = (sub: Subscription, optionId: string, label: string, clientMessageId = randomUUID()) =>
  sub.publish({
    version: 1,
    client_message_id: clientMessageId,
    blocks: [{ type: 'postback', option_id: optionId, label }],
  });

/** The publish refusal a postback gets (`{code, message}` from the official client), or fails the test. */
async function refusalOf(publish: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await publish;
  } catch (err) {
    return err as { code: number; message: string };
  }
  assert.fail('expected the publish to be refused');
}

const userCompletes = (es: MessageEnvelope[]) =>
  es.filter((e) => e.message_snapshot.role === 'user' && e.operation === 'complete');

const typesOf = (e: MessageEnvelope) => e.message_snapshot.blocks.map((b) => b.type);

for (const database of TEST_DATABASES) {
  describe(`interactive blocks (${database})`, () => {
    let server: TestServer;
    let bot: TestBot;
    before(async () => {
      server = await startTestServer({ database });
      bot = await TestBot.start();
    });
    after(async () => {
      await server.close();
      await bot.close();
    });

    /** A company whose default digital employee is a webhook bot on `bot`, and a visitor connected to it. */
    async function webhookWorld() {
      const { companyId, employee } = await createCompanyWithConnector(
        server,
        'webhook',
        bot.url,
        'whk_blocks',
      );
      await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
      const v = newVisitor(companyId);
      const { conversation, c } = await connectToNewConversation(server, v);
      return { companyId, v, conversation, c };
    }

    async function agentWorld() {
      const companyId = (await server.ctx.companies.create(`Agents ${randomUUID().slice(0, 6)}`)).id;
      const token = await fetchPlatformToken(server, companyId, [
        'conversations:read',
        'conversations:write',
      ]);
      const v = newVisitor(companyId);
      const { conversation, c } = await connectToNewConversation(server, v);
      const post = (blocks: unknown[]) =>
        http(
          `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
          bearer(token, { blocks, author: { name: 'Kim' } }),
        );
      return { v, conversation, c, post };
    }

    async function withVisitor<T>(c: ConnectedVisitor, run: () => Promise<T>): Promise<T> {
      try {
        return await run();
      } finally {
        c.close();
      }
    }

    it('a platform post carries quick replies and a card after its markdown; a postback stores the offered label', async () => {
      const { v, conversation, c, post } = await agentWorld();
      await withVisitor(c, async () => {
        const posted = await post([{ type: 'markdown', content: 'How can I help?' }, QUICK, CARD]);
        assert.equal(posted.status, 201, posted.text);
        assert.deepEqual(
          posted.body.blocks.map((b: { type: string }) => b.type),
          ['markdown', 'quick_replies', 'card'],
        );
        assert.deepEqual(posted.body.blocks[1].options, QUICK.options);
        assert.equal(posted.body.blocks[2].buttons[1].url, 'https://shop.example/shoes');
        assert.ok(posted.body.blocks.every((b: { id?: string }) => typeof b.id === 'string'));

        // The client claims another label: the server keeps the one it offered.
        await postback(c.sub, 'track', 'Give me a refund');
        await postback(c.sub, 'buy', 'Buy now');
        const users = await c.log.waitFor((es) => userCompletes(es).length === 2).then(userCompletes);
        assert.deepEqual(
          users[0]!.message_snapshot.blocks.map(({ id: _, ...b }) => b),
          [{ type: 'postback', option_id: 'track', label: 'Track my order' }],
        );
        assert.equal((users[1]!.message_snapshot.blocks[0] as { label: string }).label, 'Buy now');

        const read = await listMessages(server, v, conversation.id);
        const stored = read.body.messages.filter((m: { role: string }) => m.role === 'user');
        assert.equal(stored[0].blocks[0].label, 'Track my order');
        assert.equal(stored.length, 2);
      });
    });

    it('refuses postbacks that are not offered: unknown id, url button, stale offer (publish error 400)', async () => {
      const { v, conversation, c, post } = await agentWorld();
      await withVisitor(c, async () => {
        const none = await refusalOf(postback(c.sub, 'track', 'Track my order'));
        assert.equal(none.code, 400);
        assert.match(none.message, /^postback_not_offered/);

        assert.equal((await post([{ type: 'markdown', content: 'Pick one' }, QUICK, CARD])).status, 201);
        for (const id of ['nope', 'details']) {
          const refused = await refusalOf(postback(c.sub, id, 'Details'));
          assert.equal(refused.code, 400, id);
          assert.match(refused.message, /^postback_not_offered/, id);
        }
        // A newer agent message without the option: the first offer is stale.
        assert.equal((await post([{ type: 'markdown', content: 'Anything else?' }])).status, 201);
        const stale = await refusalOf(postback(c.sub, 'track', 'Track my order'));
        assert.equal(stale.code, 400);
        assert.match(stale.message, /^postback_not_offered/);

        // A postback beside other blocks is not a valid SendMessage at all.
        const mixed = await refusalOf(
          c.sub.publish({
            version: 1,
            client_message_id: randomUUID(),
            blocks: [
              { type: 'markdown', content: 'hi' },
              { type: 'postback', option_id: 'track', label: 'x' },
            ],
          }),
        );
        assert.equal(mixed.code, 400);
        assert.match(mixed.message, /invalid SendMessage/);

        const read = await listMessages(server, v, conversation.id);
        assert.equal(read.body.messages.filter((m: { role: string }) => m.role === 'user').length, 0);
      });
    });

    it('refuses invalid interactive blocks in agent posts with a documented code', async () => {
      const { c, post } = await agentWorld();
      await withVisitor(c, async () => {
        const cases: Array<[unknown[], number, string]> = [
          [[{ ...CARD, image_url: 'javascript:alert(1)' }], 400, 'validation_failed'],
          [[{ type: 'quick_replies', options: [] }], 400, 'validation_failed'],
          [[{ type: 'quick_replies', options: [{ id: 'a', label: '' }] }], 400, 'validation_failed'],
          [
            [{ ...CARD, buttons: [{ id: 'x', label: 'Go', url: 'ftp://files.example/' }] }],
            400,
            'validation_failed',
          ],
          [[{ type: 'quick_replies', options: [{ id: 'a', label: '   ' }] }], 400, 'invalid_blocks'],
          [[QUICK, { ...CARD, buttons: [{ id: 'track', label: 'Again' }] }], 400, 'invalid_blocks'],
          [[{ ...CARD, image_url: 'https://user:pw@shop.example/x.png' }], 400, 'invalid_blocks'],
        ];
        for (const [blocks, status, code] of cases) {
          const res = await post(blocks);
          assert.equal(res.status, status, JSON.stringify(blocks));
          assert.equal(res.body.code, code, JSON.stringify(blocks));
        }
        // The problem names the block by its place in the whole list, markdown included.
        const named = await post([
          { type: 'markdown', content: 'Pick' },
          QUICK,
          { ...CARD, buttons: [{ id: 'human', label: 'Again' }] },
        ]);
        assert.equal(named.body.code, 'invalid_blocks');
        assert.equal(named.body.errors[0].field, 'blocks[2]');
        // Quick replies alone are a message of their own.
        const alone = await post([QUICK]);
        assert.equal(alone.status, 201, alone.text);
      });
    });

    it('a webhook bot answers with blocks (JSON), receives the postback block, and streams blocks (NDJSON)', async () => {
      const { c } = await webhookWorld();
      await withVisitor(c, async () => {
        bot.handler = (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ reply: 'What do you need?', blocks: [QUICK] }));
        };
        await sendMessage(c.sub, 'hello');
        const [offer] = await c.log
          .waitFor((es) => digitalEmployeeCompletes(es).length === 1)
          .then(digitalEmployeeCompletes);
        assert.deepEqual(typesOf(offer!), ['markdown', 'quick_replies']);

        bot.handler = async (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          res.write(`${JSON.stringify({ delta: 'Here is ' })}\n`);
          // The bot's own pace between two deltas, not a wait for anything.
          await new Promise((r) => setTimeout(r, 30));
          res.write(`${JSON.stringify({ delta: 'your order.' })}\n`);
          res.end(`${JSON.stringify({ blocks: [CARD] })}\n`);
        };
        await postback(c.sub, 'track', 'whatever the client says');
        const replies = await c.log
          .waitFor((es) => digitalEmployeeCompletes(es).length === 2)
          .then(digitalEmployeeCompletes);
        const body = bot.requests.at(-1)!.body as { message: { blocks: Array<Record<string, unknown>> } };
        assert.deepEqual(
          body.message.blocks.map(({ id: _, ...b }) => b),
          [{ type: 'postback', option_id: 'track', label: 'Track my order' }],
        );
        const card = replies[1]!;
        assert.deepEqual(typesOf(card), ['markdown', 'card']);
        assert.equal((card.message_snapshot.blocks[0] as { content: string }).content, 'Here is your order.');
        assert.equal((card.message_snapshot.blocks[1] as { title: string }).title, 'Blue shoes');

        // The card's url-less button is offered now; the earlier quick replies are stale.
        await postback(c.sub, 'buy', 'Buy now');
        assert.match(
          (await refusalOf(postback(c.sub, 'human', 'Talk to a human'))).message,
          /^postback_not_offered/,
        );
      });
    });

    it('invalid blocks from a bot end the reply with responder_bad_response, never a corrupt message', async () => {
      const { c } = await webhookWorld();
      await withVisitor(c, async () => {
        const broken = [
          JSON.stringify({
            reply: 'Hi',
            blocks: [
              { type: 'card', title: 'x', buttons: [{ id: 'a', label: 'A', url: 'javascript:alert(1)' }] },
            ],
          }),
          JSON.stringify({ reply: 'Hi', blocks: [{ type: 'carousel' }] }),
          JSON.stringify({ reply: 'Hi', blocks: 'nope' }),
        ];
        for (const [i, answer] of broken.entries()) {
          bot.handler = (_req, res) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(answer);
          };
          await sendMessage(c.sub, `question ${i}`);
          const reply = (
            await c.log
              .waitFor((es) => digitalEmployeeCompletes(es).length === i + 1)
              .then(digitalEmployeeCompletes)
          )[i]!;
          assert.deepEqual(typesOf(reply), ['error'], answer);
          assert.equal((reply.message_snapshot.blocks[0] as { code: string }).code, 'responder_bad_response');
        }
        bot.handler = (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          res.end(`${JSON.stringify({ blocks: [QUICK] })}\n${JSON.stringify({ delta: 'late' })}\n`);
        };
        await sendMessage(c.sub, 'last');
        const last = (
          await c.log
            .waitFor((es) => digitalEmployeeCompletes(es).length === 4)
            .then(digitalEmployeeCompletes)
        )[3]!;
        assert.equal(
          (last.message_snapshot.blocks.at(-1) as { code: string }).code,
          'responder_bad_response',
        );
        assert.ok(!typesOf(last).includes('quick_replies'));
      });
    });

    it('a builtin script offers quick replies, and a tapped one is answered like typed text', async () => {
      const company = await server.ctx.companies.create(`Builtin ${randomUUID().slice(0, 6)}`);
      const employee = await server.ctx.digitalEmployees.create({
        companyId: company.id,
        name: 'Ava',
        responder: 'builtin',
        settings: {
          greeting: null,
          word_delay_ms: 0,
          answers: [
            {
              question: 'Orders',
              keywords: ['order'],
              answer: 'What about your order?',
              quick_replies: [
                { id: 'where', label: 'Where is it' },
                { id: 'cancel', label: 'Cancel it' },
              ],
            },
            { question: 'Where', keywords: ['where is it'], answer: 'It ships tomorrow.' },
          ],
        },
      });
      await server.ctx.digitalEmployees.setDefault(company.id, employee.id);
      const { c } = await connectToNewConversation(server, newVisitor(company.id));
      await withVisitor(c, async () => {
        await sendMessage(c.sub, 'my order');
        const [offer] = await c.log
          .waitFor((es) => digitalEmployeeCompletes(es).length === 1)
          .then(digitalEmployeeCompletes);
        assert.deepEqual(typesOf(offer!), ['markdown', 'quick_replies']);
        await postback(c.sub, 'where', 'Where is it');
        const replies = await c.log
          .waitFor((es) => digitalEmployeeCompletes(es).length === 2)
          .then(digitalEmployeeCompletes);
        assert.deepEqual(
          replies[1]!.message_snapshot.blocks.map((b) => b.type),
          ['markdown'],
        );
        assert.equal(
          (replies[1]!.message_snapshot.blocks[0] as { content: string }).content,
          'It ships tomorrow.',
        );
      });
    });
  });
}
