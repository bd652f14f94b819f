import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { connectToNewConversation, listMessages, newVisitor } from '@parley/testing/webchat/webchat-fixtures';
import { PUBLISH_CODES, PublishRefusal, parseSendMessage } from './send-message.ts';

// The HTTP edge's text rule (src/http/unsafe-text.ts) holds on the realtime boundary too, with the official client.
for (const database of TEST_DATABASES) {
  describe(`SendMessage text rule (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ database });
    });
    after(() => server.close());

    it('refuses U+0000 or an unpaired surrogate in any string with the invalid-SendMessage code, storing nothing', async () => {
      const company = await server.ctx.companies.create('Text Rule Co');
      const v = newVisitor(company.id);
      const { conversation, c } = await connectToNewConversation(server, v);
      try {
        const markdown = (content: string) => ({
          version: 1,
          client_message_id: randomUUID(),
          blocks: [{ type: 'markdown', content }],
        });
        const refusals = [
          markdown('hello\u0000world'),
          markdown('half a pair: \uD83D'),
          markdown('\uDE00 a low surrogate first'),
          { ...markdown('fine'), 'extra\u0000': 'x' },
          { version: 1, client_message_id: randomUUID(), blocks: [{ type: 'markdown\u0000', content: 'x' }] },
        ];
        for (const data of refusals) {
          await assert.rejects(c.sub.publish(data), (err: { code: number; message: string }) => {
            assert.equal(err.code, PUBLISH_CODES.invalidMessage, JSON.stringify(err));
            assert.match(err.message, /U\+0000 or an unpaired surrogate/);
            return true;
          });
        }
        // The subscription still works: an ordinary message with an emoji (a proper surrogate pair) is accepted.
        await c.sub.publish(markdown('all good 😀'));
        // Stored before it is broadcast: the history holds it now.
        await c.log.waitFor((e) => e.some((x) => x.message_snapshot.role === 'user'));
        const users = (await listMessages(server, v, conversation.id)).body.messages.filter(
          (m: { role: string }) => m.role === 'user',
        );
        assert.equal(users.length, 1);
        assert.equal(users[0].blocks[0].content, 'all good 😀');
      } finally {
        c.close();
      }
    });
  });
}

// docs/asyncapi.yaml closes SendMessage and each of its blocks: a member the schema does not name is refused, not
// ignored (a client that thinks it sent something the server dropped would be wrong about what was stored).
describe('SendMessage unknown members', () => {
  const limits = { maxMessageBytes: 16_384, maxBlocks: 20 };
  const refusalOf = (data: unknown): PublishRefusal => {
    try {
      parseSendMessage(data, limits);
    } catch (err) {
      if (err instanceof PublishRefusal) return err;
      throw err;
    }
    assert.fail('expected a refusal');
  };
  const message = (blocks: unknown[], extra: object = {}) => ({
    version: 1,
    client_message_id: randomUUID(),
    blocks,
    ...extra,
  });

  it('refuses an unknown member of the message or of any block kind, naming it', () => {
    const cases: Array<[unknown, string]> = [
      [
        message([{ type: 'markdown', content: 'x' }], { colour: 'red' }),
        'invalid SendMessage: unknown field "colour"',
      ],
      [
        message([{ type: 'markdown', content: 'x', bold: true }]),
        'invalid SendMessage: blocks[0] has unknown field "bold"',
      ],
      [
        message([{ type: 'attachment', attachment_id: randomUUID(), name: 'a.png' }]),
        'invalid SendMessage: blocks[0] has unknown field "name"',
      ],
      [
        message([{ type: 'postback', option_id: 'yes', label: 'Yes', value: 1 }]),
        'invalid SendMessage: blocks[0] has unknown field "value"',
      ],
    ];
    for (const [data, text] of cases) {
      const refusal = refusalOf(data);
      assert.equal(refusal.code, PUBLISH_CODES.invalidMessage);
      assert.equal(refusal.message, text);
    }
  });

  it('accepts each block kind with exactly its members', () => {
    for (const block of [
      { type: 'markdown', content: 'x' },
      { type: 'attachment', attachment_id: randomUUID() },
      { type: 'postback', option_id: 'yes', label: 'Yes' },
    ]) {
      assert.equal(parseSendMessage(message([block]), limits).blocks.length, 1);
    }
  });
});
