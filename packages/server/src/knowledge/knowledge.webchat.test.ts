import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Parser } from '@asyncapi/parser';
import { TEST_DATABASES } from '@parley/testing/databases';
import { RETURNS_ARTICLE } from '@parley/testing/knowledge/knowledge-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import {
  connectToNewConversation,
  digitalEmployeeCompletes,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import type { MessageEnvelope } from '@parley/webchat-protocol';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

const DOC = new URL('../../../../docs/asyncapi.yaml', import.meta.url);
process.env.SCARF_ANALYTICS = 'false';

// A cited answer as a visitor receives it: the company's default (builtin) digital employee answers from knowledge
// over the realtime connection; the envelope holds markdown, then `sources`, and validates against docs/asyncapi.yaml.
for (const database of TEST_DATABASES) {
  describe(`cited answers in the webchat (${database})`, () => {
    let server: TestServer;
    // biome-ignore lint/suspicious/noExplicitAny: the AsyncAPI parser's document model is untyped JSON here.
    let validEnvelope: any;
    before(async () => {
      server = await startTestServer({ database });
      const { document } = await new Parser().parse(readFileSync(DOC, 'utf8'));
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats.default(ajv);
      validEnvelope = ajv.compile(
        document!.components().messages().get('MessageEnvelope')!.payload()!.json(),
      );
    });
    after(() => server.close());

    it('answers with sources after the markdown; unknown → handover offer; the postback hands over', async () => {
      const company = await server.ctx.companies.create(`Knowledge Co ${randomUUID().slice(0, 6)}`);
      const source = await server.ctx.knowledge.create(
        company.id,
        {
          kind: 'text',
          title: 'Returns and refunds',
          content: RETURNS_ARTICLE,
          url: 'https://help.example/returns',
        },
        { actor: 'test' },
      );
      const v = newVisitor(company.id);
      const { c } = await connectToNewConversation(server, v);
      try {
        await sendMessage(c.sub, 'How many days do I have to return a book?');
        const [answer] = await c.log
          .waitFor((e) => digitalEmployeeCompletes(e).length > 0)
          .then(digitalEmployeeCompletes);
        const blocks = answer!.message_snapshot.blocks;
        assert.deepEqual(
          blocks.map((b) => b.type),
          ['markdown', 'sources'],
        );
        const sources = blocks[1] as { sources: Array<{ source_id: string; url?: string; title: string }> };
        assert.equal(sources.sources[0]?.source_id, source.id);
        assert.equal(sources.sources[0]?.url, 'https://help.example/returns');
        assert.match((blocks[0] as { content: string }).content, /within 30 days/);
        assert.ok(validEnvelope(answer), JSON.stringify(validEnvelope.errors));
        const broken = structuredClone(answer!) as MessageEnvelope;
        (broken.message_snapshot.blocks[1] as { sources: unknown[] }).sources = [{ title: 'no id' }];
        assert.equal(validEnvelope(broken), false, 'the schema is not vacuous');

        await sendMessage(c.sub, 'Can I pay with cryptocurrency?');
        const second = await c.log
          .waitFor((e) => digitalEmployeeCompletes(e).length > 1)
          .then((e) => digitalEmployeeCompletes(e)[1]!);
        assert.deepEqual(
          second.message_snapshot.blocks.map((b) => b.type),
          ['markdown', 'quick_replies'],
        );
        assert.match((second.message_snapshot.blocks[0] as { content: string }).content, /don't know/);
        const offer = second.message_snapshot.blocks[1] as { options: Array<{ id: string; label: string }> };
        const handover = offer.options.find((o) => o.id === 'handover');
        assert.ok(handover);
        assert.ok(validEnvelope(second), JSON.stringify(validEnvelope.errors));

        await c.sub.publish({
          version: 1,
          client_message_id: randomUUID(),
          blocks: [{ type: 'postback', option_id: 'handover', label: handover.label }],
        });
        await c.log.waitFor((e) =>
          e.some((x) =>
            x.message_snapshot.blocks.some((b) => b.type === 'notice' && b.notice === 'human_requested'),
          ),
        );
      } finally {
        c.close();
      }
    });
  });
}
