import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import {
  conversationWith,
  createCompanyWithConnector,
  respondAs,
} from '@parley/testing/digital-employees/responder-fixtures';
import { TestBot, writeChatCompletionStream } from '@parley/testing/digital-employees/test-bots';
import { collect } from '@parley/testing/digital-employees/test-messages';
import { RETURNS_ARTICLE, SHIPPING_ARTICLE } from '@parley/testing/knowledge/knowledge-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import type { ReplyBlockInput, SourcesBlock } from '@parley/webchat-protocol';
import { SETTINGS_DEFAULTS } from '../digital-employees/digital-employees.settings.ts';
import { BuiltinResponder } from '../digital-employees/responders/builtin.responder.ts';
import type { ReplyChunk } from '../digital-employees/responders/responder.ts';
import { DONT_KNOW, HANDING_OVER } from './grounding.ts';
import type { KnowledgeSearch } from './knowledge-search.ts';

const textOf = (chunks: ReplyChunk[]) => chunks.filter((c): c is string => typeof c === 'string').join('');
const blocksOf = (chunks: ReplyChunk[]): ReplyBlockInput[] =>
  chunks.flatMap((c) => (typeof c === 'string' || !('blocks' in c) ? [] : c.blocks));
const sourcesOf = (chunks: ReplyChunk[]) =>
  blocksOf(chunks).filter((b): b is Omit<SourcesBlock, 'id'> => b.type === 'sources');
const handoverOffered = (chunks: ReplyChunk[]) =>
  blocksOf(chunks).some((b) => b.type === 'quick_replies' && b.options.some((o) => o.id === 'handover'));

// Cited answers (docs/knowledge.md): the builtin employee answers from knowledge
// without a model, the openai employee gets the passages and cites them; both say "I don't know" in code.
for (const database of TEST_DATABASES) {
  describe(`answers from knowledge (${database})`, () => {
    let server: TestServer;
    let api: TestBot;
    let returnsId: string;
    let shippingId: string;
    let company: Awaited<ReturnType<typeof createCompanyWithConnector>>;
    before(async () => {
      server = await startTestServer({ database });
      api = await TestBot.start();
      company = await createCompanyWithConnector(server, 'openai', `${api.url}/v1`, 'sk-test-knowledge', {
        model: 'test-model',
      });
      const actor = { actor: 'test' };
      returnsId = (
        await server.ctx.knowledge.create(
          company.companyId,
          {
            kind: 'text',
            title: 'Returns and refunds',
            content: RETURNS_ARTICLE,
            url: 'https://help.example/returns',
          },
          actor,
        )
      ).id;
      shippingId = (
        await server.ctx.knowledge.create(
          company.companyId,
          { kind: 'text', title: 'Shipping', content: SHIPPING_ARTICLE, contentType: 'text/html' },
          actor,
        )
      ).id;
    });
    after(async () => {
      await server.close();
      await api.close();
    });

    const builtin = async () =>
      server.ctx.digitalEmployees.create({
        companyId: company.companyId,
        name: 'Helper',
        responder: 'builtin',
        connectorId: null,
        model: null,
        systemPrompt: null,
        settings: {
          word_delay_ms: 0,
          answers: [{ question: 'Hello', keywords: ['hello', 'hi'], answer: 'Hello! How can I help?' }],
        },
      });

    it('builtin: quotes the most relevant passage and lists its source first', async () => {
      const employee = await builtin();
      const chunks = await collect(
        respondAs(
          server,
          employee,
          conversationWith(
            company.companyId,
            [],
            'How long until my refund is paid?',
            new AbortController().signal,
          ),
        ),
      );
      const text = textOf(chunks);
      assert.match(text, /within five working\s+days/, 'text taken from the source');
      assert.match(text, /Returns and refunds › Refunds/);
      const [sources] = sourcesOf(chunks);
      assert.ok(sources);
      assert.equal(sources.sources[0]?.source_id, returnsId);
      assert.equal(sources.sources[0]?.url, 'https://help.example/returns');
      assert.equal(handoverOffered(chunks), false);
    });

    it('builtin: says it does not know, without sources, and offers a person; small talk stays friendly', async () => {
      const employee = await builtin();
      const unknown = await collect(
        respondAs(
          server,
          employee,
          conversationWith(
            company.companyId,
            [],
            'Do you sell gift vouchers for birthdays?',
            new AbortController().signal,
          ),
        ),
      );
      assert.equal(textOf(unknown), DONT_KNOW);
      assert.equal(sourcesOf(unknown).length, 0);
      assert.ok(handoverOffered(unknown));

      const hello = await collect(
        respondAs(
          server,
          employee,
          conversationWith(company.companyId, [], 'Hi!', new AbortController().signal),
        ),
      );
      assert.equal(textOf(hello), 'Hello! How can I help?');
      assert.equal(blocksOf(hello).length, 0);
    });

    it('the handover postback hands over like request_human', async () => {
      const employee = await builtin();
      let requested = 0;
      const input = conversationWith(company.companyId, [], 'Talk to a person', new AbortController().signal);
      input.message.blocks = [
        { id: 'p', type: 'postback', option_id: 'handover', label: 'Talk to a person' },
      ];
      const chunks = await collect(
        respondAs(server, employee, { ...input, requestHuman: () => requested++ }),
      );
      assert.equal(requested, 1);
      assert.equal(textOf(chunks), HANDING_OVER);
    });

    it('openai: sends numbered passages, lists exactly the cited sources in order of first citation', async () => {
      let prompt = '';
      api.handler = async (request, res) => {
        const body = request.body as { messages: Array<{ role: string; content: string }> };
        prompt = body.messages
          .filter((m) => m.role === 'system')
          .map((m) => m.content)
          .join('\n');
        // Cite the shipping passage first, then the refunds passage, whatever their numbers.
        const number = (title: string) => new RegExp(`\\[(\\d+)\\] ${title}`).exec(prompt)?.[1];
        const shipping = number('Shipping › International shipping');
        const refunds = number('Returns and refunds › Refunds');
        await writeChatCompletionStream(res, 'test-model', [
          `Customs are paid by you [${shipping}]. `,
          `Refunds take five working days [${refunds}] [${shipping}].`,
        ]);
      };
      const before = api.requests.length;
      const chunks = await collect(
        respondAs(
          server,
          company.employee,
          conversationWith(
            company.companyId,
            [],
            'Who pays customs duties on international shipping, and when is my refund paid?',
            new AbortController().signal,
          ),
        ),
      );
      assert.equal(api.requests.length, before + 1);
      assert.match(prompt, /\[1\] /);
      assert.match(prompt, /customs duties are paid by the recipient/, 'the passage text reaches the model');
      assert.match(prompt, /five working\s+days/);
      assert.match(textOf(chunks), /^Customs are paid by you \[\d\]\. Refunds/);
      const [sources] = sourcesOf(chunks);
      assert.deepEqual(
        sources?.sources.map((s) => s.source_id),
        [shippingId, returnsId],
      );
      assert.equal(sources?.sources[0]?.title, 'Shipping › International shipping');
    });

    it('openai: nothing relevant → "I don\'t know" and a person, without calling the model; small talk goes to the model', async () => {
      api.handler = async (_request, res) => writeChatCompletionStream(res, 'test-model', ['Hello there!']);
      const before = api.requests.length;
      const chunks = await collect(
        respondAs(
          server,
          company.employee,
          conversationWith(
            company.companyId,
            [],
            'What is the weather in Lisbon tomorrow?',
            new AbortController().signal,
          ),
        ),
      );
      assert.equal(api.requests.length, before, 'no model call');
      assert.equal(textOf(chunks), DONT_KNOW);
      assert.equal(sourcesOf(chunks).length, 0);
      assert.ok(handoverOffered(chunks));

      const hello = await collect(
        respondAs(
          server,
          company.employee,
          conversationWith(company.companyId, [], 'Hello!', new AbortController().signal),
        ),
      );
      assert.equal(api.requests.length, before + 1);
      assert.equal(textOf(hello), 'Hello there!');
      assert.equal(sourcesOf(hello).length, 0);
    });

    it('a deleted source is never cited again', async () => {
      const actor = { actor: 'test' };
      const temp = await server.ctx.knowledge.create(
        company.companyId,
        { kind: 'text', title: 'Bookmarks', content: 'Every order ships with a free leather bookmark.' },
        actor,
      );
      const employee = await builtin();
      const ask = () =>
        collect(
          respondAs(
            server,
            employee,
            conversationWith(company.companyId, [], 'free leather bookmark?', new AbortController().signal),
          ),
        );
      assert.equal(sourcesOf(await ask())[0]?.sources[0]?.source_id, temp.id);
      await server.ctx.knowledge.delete(company.companyId, temp.id, actor);
      const after = await ask();
      assert.equal(sourcesOf(after).length, 0);
      assert.equal(textOf(after), DONT_KNOW);
    });

    it('builtin: a company without a ready source is never searched, and answers as configured', async () => {
      // The real knowledge service, with every search it is asked for counted.
      const searched: string[] = [];
      const knowledge: KnowledgeSearch = {
        get relevanceThreshold() {
          return server.ctx.knowledge.relevanceThreshold;
        },
        hasSources: (companyId) => server.ctx.knowledge.hasSources(companyId),
        search: (companyId, query, options) => {
          searched.push(query);
          return server.ctx.knowledge.search(companyId, query, options);
        },
      };
      const bare = await server.ctx.companies.create('No knowledge yet');
      const employee = await builtin();
      const ask = async (companyId: string, text: string) =>
        collect(
          new BuiltinResponder(employee, knowledge).respond({
            ...conversationWith(companyId, [], text, new AbortController().signal),
            digitalEmployee: employee,
          }),
        );
      const reply = await ask(bare.id, 'How long until my refund is paid?');
      assert.deepEqual(searched, []);
      assert.equal(textOf(reply), SETTINGS_DEFAULTS.fallback);
      assert.equal(sourcesOf(reply).length, 0);
      // The same question to the company with knowledge is searched and answered from it.
      const grounded = await ask(company.companyId, 'How long until my refund is paid?');
      assert.deepEqual(searched, ['How long until my refund is paid?']);
      assert.equal(sourcesOf(grounded)[0]?.sources[0]?.source_id, returnsId);
    });
  });
}
