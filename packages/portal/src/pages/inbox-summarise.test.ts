import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestBot, writeChatCompletionStream } from '@parley/testing/digital-employees/test-bots';
import { screenshotFolder, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  type ConnectedVisitor,
  connectToNewConversation,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { expectNoSeriousAxeViolations } from '../testing/axe.ts';

/** Screenshots to look at (outside the repository). */
const shot = screenshotFolder('inbox-summarise');
const MODEL = 'parley-test-model';

/** What the model writes: markdown, and markup that must stay text (docs/design.md "Agent workspace", Summarise). */
const HANDOVER_SUMMARY =
  '**Wants** a refund for order #1042.\n\n- Told: returns within 30 days\n- Open: <img src=x onerror="window.pwned=1"> the refund itself';
const ON_DEMAND_SUMMARY = 'Visitor is *still waiting* for the refund.\n\n1. Check the order\n2. Refund it';

interface ChatRequest {
  stream?: boolean;
  messages: Array<{ role: string; content: string }>;
}

/**
 * AI help from an `openai` digital employee on the local OpenAI-compatible test server: the hand-over summary its
 * model writes and "Summarise" on demand both render as markdown in the summary box, through the widget's renderer
 * (no HTML parser: the model's `<img onerror>` shows as text and never runs), and the model never reads notes.
 */
describe('portal in a browser: summaries by an openai model', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let model: TestBot;
  let visitor: { conversation: { id: string }; c: ConnectedVisitor };
  /** The non-streamed requests: one per summary. */
  const summaryRequests: ChatRequest[] = [];

  before(async () => {
    model = await TestBot.start();
    model.handler = (req, res) => {
      const body = req.body as ChatRequest;
      const isSummary = !body.stream && body.messages[0]?.content.startsWith('You summarise');
      if (!isSummary) return writeChatCompletionStream(res, MODEL, ['Our policy ', 'is 30 days.']);
      summaryRequests.push(body);
      const content = summaryRequests.length === 1 ? HANDOVER_SUMMARY : ON_DEMAND_SUMMARY;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `sum-${summaryRequests.length}`,
          object: 'chat.completion',
          model: MODEL,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
        }),
      );
      return undefined;
    };
    ({ server, browser } = await startPortalPage({
      server: { config: { webchat: { streamFlushIntervalMs: 0 } } },
      users: { 'kim@acme.test': 'agent' },
      signInAs: 'kim@acme.test',
      seed: async (server, companyId) => {
        const connector = await server.ctx.connectors.create(
          { companyId, name: 'Model API', type: 'openai', url: `${model.url}/v1`, apiKey: 'sk-test' },
          { actor: 'test' },
        );
        const employee = await server.ctx.digitalEmployees.create({
          companyId,
          name: 'Ava',
          responder: 'openai',
          connectorId: connector.id,
          model: MODEL,
          systemPrompt: null,
          settings: {},
        });
        await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
        visitor = await connectToNewConversation(server, newVisitor(companyId));
      },
    }));
    await sendMessage(visitor.c.sub, 'I want a refund for order #1042');
    await visitor.c.log.waitFor((es) =>
      es.some((e) => e.message_snapshot.role === 'digital_employee' && e.operation === 'complete'),
    );
  });
  after(async () => {
    visitor?.c.close();
    await closePortalPage({ server, browser });
    await model?.close();
  });

  it('shows the model’s hand-over summary as markdown, its markup as text', async () => {
    const { page } = browser;
    await page.goto(`/portal/inbox/${visitor.conversation.id}`);
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    await page.getByRole('button', { name: 'Take over' }).click();
    await page.getByText('Handled by an agent (kim).').waitFor();
    // The summary note is written in the background on the hand-over; the box shows it on the next read.
    await waitFor(
      'the hand-over summary note',
      async () =>
        (await server.ctx.webchat.store.latestNoteOfKind(visitor.conversation.id, 'handover_summary')) ??
        undefined,
    );
    await page.reload();
    const summary = page.getByRole('region', { name: 'Hand-over summary' });
    await summary.locator('strong', { hasText: 'Wants' }).waitFor();
    assert.deepEqual(await summary.locator('li').allTextContents(), [
      'Told: returns within 30 days',
      'Open: <img src=x onerror="window.pwned=1"> the refund itself',
    ]);
    assert.equal(await summary.locator('img').count(), 0, 'markup stays text');
    assert.ok(!((await summary.textContent()) ?? '').includes('**'), 'no raw markdown');
    assert.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined);
    await expectNoSeriousAxeViolations(page, 'hand-over summary');
    await shot(page, '1-handover-summary');
  });

  it('summarises on demand with the model, which reads the transcript without the notes', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Summarise' }).click();
    const summary = page.getByRole('region', { name: 'Summary' });
    await summary.locator('em', { hasText: 'still waiting' }).waitFor();
    assert.deepEqual(await summary.locator('ol li').allTextContents(), ['Check the order', 'Refund it']);
    assert.equal(summaryRequests.length, 2, 'one request per summary');
    const transcript = summaryRequests[1]!.messages.find((m) => m.role === 'user')!.content;
    assert.match(transcript, /Visitor: I want a refund for order #1042/);
    assert.match(transcript, /Our policy is 30 days\./);
    assert.ok(!transcript.includes('Wants'), 'the hand-over summary note is not sent to the model');
    await expectNoSeriousAxeViolations(page, 'summary on demand');
    await shot(page, '2-summarise');
  });
});
