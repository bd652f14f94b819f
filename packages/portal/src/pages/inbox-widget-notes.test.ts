import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { screenshotFolder, signIn, startPortalBrowser } from '@parley/testing/portal/browser';
import { PASSWORD } from '@parley/testing/portal/portal-fixtures';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import { waitForSettled } from '@parley/testing/wait';
import { sitePage, startSite, type TestSite } from '@parley/testing/widget/site';
import type { Page } from 'playwright-core';
import { expectNoSeriousAxeViolations } from '../testing/axe.ts';

/** Screenshots to look at (outside the repository). */
const shot = screenshotFolder('inbox-widget-notes');
const NOTE = 'Internal: refund approved by finance, do not promise a date';
const REPLY = 'Your refund is on its way.';

/**
 * What the visitor's browser receives, from the moment the widget loads: every WebSocket frame and every response
 * body from Parley's origin (REST reads, history recovery, the realtime fallbacks). A body is read after its
 * response event, in a round trip of its own to the browser, so it can land after the page has already drawn what it
 * carried: `settled()` waits for the bodies of every response seen so far, and is what the assertions read after.
 */
interface Traffic {
  received: string[];
  settled(): Promise<void>;
}

function recordTraffic(page: Page, parleyOrigin: string): Traffic {
  const received: string[] = [];
  const reading = new Set<Promise<void>>();
  page.on('websocket', (ws) => ws.on('framereceived', (frame) => received.push(String(frame.payload))));
  page.on('response', (response) => {
    if (new URL(response.url()).origin !== parleyOrigin) return;
    const read: Promise<void> = response.text().then(
      (body) => {
        received.push(body);
      },
      () => undefined, // A body the page no longer holds (a redirect, a navigation): nothing received to read.
    );
    reading.add(read);
    void read.finally(() => reading.delete(read));
  });
  return {
    received,
    settled: async () => {
      // Bounded: each round waits for the reads begun so far (a body that never ends, a stream, fails by name);
      // a page left alone starts no new ones for long.
      for (let round = 0; round < 100 && reading.size > 0; round++)
        await waitForSettled(Promise.all(reading), 30_000, 'the bodies of the responses seen so far');
    },
  };
}

/**
 * Private notes stay with the agents (docs/design.md "Internal notes"): an agent writes a note and a public reply in
 * the inbox while the visitor chats in the real widget on an integrator's site, in a second browser; a colleague
 * with the same conversation open in a third browser sees the hand-over summary and the note arrive live (no
 * reload); the visitor sees the reply and never the note nor the hand-over summary — not in the widget's DOM, not in
 * any frame or response their browser received, not after a reload (history recovery).
 */
describe('portal in a browser: notes never reach the visitor’s widget', () => {
  let server: TestServer;
  let agent: TestBrowser;
  let colleague: TestBrowser;
  let visitor: TestBrowser;
  let site: TestSite;
  let channelId = '';
  let companyId = '';
  let traffic: Traffic;

  before(async () => {
    site = await startSite();
    ({ server, browser: agent } = await startPortalPage({
      server: { config: { webchat: { streamFlushIntervalMs: 0 } } },
      users: { 'kim@acme.test': 'agent', 'ann@acme.test': 'agent' },
      signInAs: 'kim@acme.test',
      seed: async (server, acmeId) => {
        companyId = acmeId;
        const employee = await server.ctx.digitalEmployees.create({
          companyId,
          name: 'Ava',
          responder: 'builtin',
          settings: { greeting: 'Hi, I am Ava. How can I help?', word_delay_ms: 5, answers: [] },
        });
        await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
        channelId = (
          await server.ctx.webchat.channels.create({
            companyId,
            name: 'Shop',
            digitalEmployeeId: employee.id,
            allowedOrigins: [site.url],
          })
        ).id;
      },
    }));
    site.setPage(
      '/shop',
      sitePage(
        `<script src="${server.baseUrl}/widget.js" data-company="${companyId}" data-channel="${channelId}"></script>`,
      ),
    );
    visitor = await startChromium({
      viewport: { width: 1000, height: 760 },
      profilePrefix: 'parley-visitor-',
    });
    traffic = recordTraffic(visitor.page, new URL(server.baseUrl).origin);
    colleague = await startPortalBrowser(server.baseUrl);
    await signIn(colleague.page, 'ann@acme.test', PASSWORD);
  });
  after(async () => {
    await colleague?.close();
    await visitor?.close();
    await closePortalPage({ server, browser: agent });
    await site?.close();
  });

  it('the visitor sees the agent’s reply and never the note', async () => {
    const v = visitor.page;
    await v.goto(`${site.url}/shop`);
    await v.locator('.launcher').click();
    await v.locator('.msg.digital_employee[data-status="complete"]').first().waitFor();
    await v.locator('textarea').fill('I need help with my refund');
    await v.keyboard.press('Enter');
    await v.locator('.msg.user').filter({ hasText: 'I need help with my refund' }).waitFor();
    const id = await v.evaluate(
      (key) => localStorage.getItem(key),
      `parley:${companyId}:conversation:${channelId}`,
    );
    assert.ok(id, 'the widget keeps its conversation');

    // A colleague has the conversation open (its channel and the inbox channel both live) before anything happens.
    const c = colleague.page;
    await c.goto(`/portal/inbox/${id}`);
    await c.locator('main[data-inbox-live="true"]').waitFor();
    await c.locator('.transcript-pane[data-live="true"]').waitFor();
    await c.locator('.message.user').filter({ hasText: 'I need help with my refund' }).waitFor();
    assert.equal(await c.locator('.message.note').count(), 0, 'no note yet');

    // The agent opens the conversation by its URL, takes it over, writes a note, then replies.
    const a = agent.page;
    await a.goto(`/portal/inbox/${id}`);
    await a.locator('.transcript-pane[data-live="true"]').waitFor();
    await a.locator('.message.user').filter({ hasText: 'I need help with my refund' }).waitFor();
    await a.getByRole('button', { name: 'Take over' }).click();
    await a.getByText('Handled by an agent (kim).').waitFor();
    const write = a.getByRole('group', { name: 'Write' });
    await write.getByRole('button', { name: 'Note' }).click();
    await a.getByLabel('Private note').fill(NOTE);
    await a.getByLabel('Private note').press('Enter');
    await a.locator('.message.note').filter({ hasText: NOTE }).waitFor();

    // The colleague got both notes live: the hand-over summary in the box at the top (the transcript keeps one
    // collapsed line pointing at it, so the summary reads once) and the agent's note in the transcript.
    await c.locator('.message.note').filter({ hasText: NOTE }).waitFor();
    const marker = c.locator('.message.handover-marker');
    await marker.filter({ hasText: 'Hand-over summary, shown above' }).waitFor();
    const box = c.getByRole('region', { name: 'Hand-over summary' });
    await box.getByText('I need help with my refund').waitFor();
    assert.equal(await marker.count(), 1, 'one marker for the one hand-over');
    assert.equal(
      await marker.locator('.text').isVisible(),
      false,
      'the marker is collapsed: the text shows once',
    );
    assert.equal(await c.locator('.message.note').filter({ hasText: NOTE }).count(), 1, 'the note once');
    await expectNoSeriousAxeViolations(c, 'notes arrived live at a colleague');
    await shot(c, '0-colleague-live');
    await write.getByRole('button', { name: 'Reply' }).click();
    await a.getByLabel('Reply as agent').fill(REPLY);
    await a.getByLabel('Reply as agent').press('Enter');
    await a.locator('.message.agent').filter({ hasText: REPLY }).waitFor();
    await expectNoSeriousAxeViolations(a, 'note and reply');
    await shot(a, '1-agent');

    // The visitor gets the reply. The note was written before it on the same conversation, so had it been sent, it
    // would have arrived first.
    await v.locator('.msg.agent').filter({ hasText: REPLY }).waitFor();
    await shot(v, '2-visitor');
    const shown = (await v.locator('body').innerText()) + (await widgetText(v));
    await traffic.settled();
    const { received } = traffic;
    assert.ok(shown.includes(REPLY), 'the reply is on screen');
    assert.ok(!shown.includes(NOTE), 'the note is not on screen');
    assert.ok(!shown.includes('Hand-over summary'), 'nor the hand-over summary');
    assert.ok(
      received.some((r) => r.includes(REPLY)),
      'the traffic recorded holds the reply (so it would hold the note too)',
    );
    assert.deepEqual(
      received.filter((r) => r.includes(NOTE) || r.includes('Hand-over summary')),
      [],
      'no frame or response carried a note',
    );

    // History recovery after a reload: the reply comes back, the note still does not.
    received.length = 0;
    await v.reload();
    // The widget reopens as the visitor left it (open); the launcher is clicked only if it came back closed.
    const reply = v.locator('.msg.agent').filter({ hasText: REPLY });
    await reply.waitFor({ state: 'attached' });
    if (!(await reply.isVisible())) await v.locator('.launcher').click();
    await reply.waitFor();
    const again = await widgetText(v);
    await traffic.settled();
    assert.ok(!again.includes(NOTE));
    assert.ok(received.some((r) => r.includes(REPLY)));
    assert.deepEqual(
      received.filter((r) => r.includes(NOTE)),
      [],
      'history recovery carried no note',
    );
    await shot(v, '3-visitor-reloaded');
  });
});

/**
 * The widget's own text, whether it renders in the page or in shadow roots (innerText does not enter those). No
 * named function inside: the page gets this source as compiled, and the compiler's name helper is not there.
 */
function widgetText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const texts = [document.body.textContent ?? ''];
    const roots: Array<Document | ShadowRoot> = [document];
    for (let root = roots.pop(); root; root = roots.pop()) {
      for (const el of root.querySelectorAll('*')) {
        if (!el.shadowRoot) continue;
        texts.push(el.shadowRoot.textContent ?? '');
        roots.push(el.shadowRoot);
      }
    }
    return texts.join('\n');
  });
}
