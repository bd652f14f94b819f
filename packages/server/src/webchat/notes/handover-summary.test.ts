import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { createCompanyWithConnector } from '@parley/testing/digital-employees/responder-fixtures';
import { TestBot, writeChatCompletionStream } from '@parley/testing/digital-employees/test-bots';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  bearer,
  connectToNewConversation,
  fetchPlatformToken,
  listMessages,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';

const MODEL = 'parley-test-model';

// Hand-over summaries (docs/design.md "Hand-over summaries"): a note for agents whenever a person takes over.
for (const database of TEST_DATABASES) {
  describe(`hand-over summaries (${database})`, () => {
    let server: TestServer;
    let model: TestBot;
    before(async () => {
      server = await startTestServer({ database });
      model = await TestBot.start();
    });
    after(async () => {
      await model.close();
      await server.close();
    });

    async function converse(companyId: string, question: string) {
      const v = newVisitor(companyId);
      const { conversation, c } = await connectToNewConversation(server, v);
      await sendMessage(c.sub, question);
      await c.log.waitFor((e) =>
        e.some(
          (x) =>
            x.operation === 'complete' && x.message_snapshot.role === 'digital_employee' && x.sequence > 0,
        ),
      );
      return { v, conversation, c };
    }

    async function handOver(companyId: string, conversationId: string) {
      const token = await fetchPlatformToken(server, companyId, [
        'conversations:read',
        'conversations:write',
      ]);
      const res = await http(
        `${server.baseUrl}/platform/v1/conversations/${conversationId}/handover`,
        bearer(token, { author: { name: 'Sam' } }),
      );
      assert.equal(res.status, 200, res.text);
      const note = await waitFor('the summary note', async () => {
        const read = await http(
          `${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`,
          bearer(token),
        );
        return read.body.messages.find((m: { role: string }) => m.role === 'note');
      });
      return { token, note };
    }

    it('builtin employee: an extractive summary of the visitor’s questions, for agents only', async () => {
      const company = await server.ctx.companies.create(`Summary ${randomUUID()}`);
      const { v, conversation, c } = await converse(company.id, 'Can I return shoes after 30 days?');
      try {
        const { note } = await handOver(company.id, conversation.id);
        assert.match(note.blocks[0].content, /Hand-over summary/);
        assert.match(note.blocks[0].content, /return shoes after 30 days/);
        assert.equal(note.author.type, 'system');
        const sdk = await listMessages(server, v, conversation.id);
        assert.ok(!sdk.text.includes('Hand-over summary'), 'the visitor never reads it');
        assert.ok(!JSON.stringify(c.log.envelopes).includes('Hand-over summary'), 'nor receives it live');
      } finally {
        c.close();
      }
    });

    it('openai employee: one non-streamed request to its model writes the summary; a failing model → extractive', async () => {
      const { companyId, employee } = await createCompanyWithConnector(
        server,
        'openai',
        `${model.url}/v1`,
        'sk-x',
        {
          model: MODEL,
        },
      );
      await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
      let summaries = 0;
      let failSummary = false;
      model.handler = (req, res) => {
        const body = req.body as { stream?: boolean; messages: Array<{ content: string }> };
        if (body.stream) return writeChatCompletionStream(res, MODEL, ['Our policy is 30 days.']);
        summaries += 1;
        if (failSummary) return res.writeHead(500).end();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            model: MODEL,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: 'Wants to return shoes bought 40 days ago.' },
              },
            ],
          }),
        );
        return undefined;
      };
      const first = await converse(companyId, 'Can I return shoes bought 40 days ago?');
      try {
        const before = model.requests.length;
        const { note } = await handOver(companyId, first.conversation.id);
        assert.match(note.blocks[0].content, /Wants to return shoes bought 40 days ago\./);
        assert.equal(note.author.type, 'digital_employee');
        const request = model.requests
          .slice(before)
          .find((r) => (r.body as { stream?: boolean }).stream === false);
        assert.ok(request, 'a non-streamed chat completion');
        assert.match(JSON.stringify(request!.body), /Visitor: Can I return shoes bought 40 days ago\?/);
        assert.equal(summaries, 1);
      } finally {
        first.c.close();
      }
      failSummary = true;
      const second = await converse(companyId, 'Where is my refund?');
      try {
        const { note } = await handOver(companyId, second.conversation.id);
        assert.match(note.blocks[0].content, /Where is my refund\?/);
        assert.equal(note.author.type, 'system', 'extractive after the model failed');
      } finally {
        second.c.close();
      }
    });
  });
}
