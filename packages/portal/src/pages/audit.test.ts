import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openSection, screenshot, type TestBrowser, waitForClipboard } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';

describe('portal in a browser: audit log page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let secret = '';
  before(async () => {
    ({ server, browser } = await startPortalPage());
    // Activity to audit, made through the portal API with the page's own session and CSRF token.
    secret = await browser.page.evaluate(async () => {
      const session = await (await fetch('/portal/api/session')).json();
      const headers = { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token };
      const created = await (
        await fetch('/portal/api/api-clients', {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'Audited', scopes: ['connector:read'] }),
        })
      ).json();
      for (let i = 0; i < 24; i++) {
        await fetch('/portal/api/company/allowed-origins', {
          method: 'PUT',
          headers,
          body: JSON.stringify({ allowed_origins: [`https://s${i}.example`] }),
        });
      }
      return created.client_secret as string;
    });
    await openSection(browser.page, 'Audit log');
  });
  after(() => closePortalPage({ server, browser }));

  it('pages newest first, filters by type, names the actor and shows no secret', async () => {
    const { page } = browser;
    const rows = page.locator('tbody tr');
    await page.getByText('Page 1').waitFor();
    assert.equal(await rows.count(), 20);
    assert.match((await rows.first().textContent())!, /company\.allowed_origins_changed/);
    assert.match((await rows.first().textContent())!, /admin@acme\.test/);
    await page.getByRole('button', { name: 'Older' }).click();
    await page.getByText('Page 2').waitFor();
    assert.match((await page.locator('tbody').textContent())!, /api_client\.created/);
    assert.match((await page.locator('tbody').textContent())!, /portal\.signed_in/);
    assert.equal(await page.getByRole('button', { name: 'Older' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Newer' }).click();
    await page.getByText('Page 1').waitFor();

    await page.getByLabel('Event type').fill('api_client.created');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    assert.match((await rows.first().textContent())!, /Audited/);
    assert.ok(!(await page.content()).includes(secret), 'the client secret is not in the audit log');
    await screenshot(page, 'audit');
  });

  it('shows ids whole on one line: shortened, with the full value on hover and copy', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 20);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      // Every line change inside a value, found character by character: none may fall between two letters/digits.
      const { values, midWord } = await page.evaluate(() => {
        const found: string[] = [];
        const codes = [...document.querySelectorAll('table.audit code')];
        for (const code of codes) {
          const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
          let previous: { char: string; top: number } | undefined;
          for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
            for (let i = 0; i < node.length; i++) {
              const range = document.createRange();
              range.setStart(node, i);
              range.setEnd(node, i + 1);
              const rect = range.getClientRects()[0];
              if (!rect) continue;
              const char = node.data[i]!;
              const wordChars = /[A-Za-z0-9]/.test(char) && /[A-Za-z0-9]/.test(previous?.char ?? '');
              if (previous && rect.top > previous.top + 2 && wordChars) found.push(code.textContent ?? '');
              previous = { char, top: rect.top };
            }
          }
        }
        return { values: codes.length, midWord: found };
      });
      assert.ok(values >= 60, 'the 20 rows have their event, subject and details values');
      assert.deepEqual(midWord, [], `no value breaks inside a word at ${width}px`);
      await screenshot(page, `audit-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByLabel('Event type').fill('api_client.created');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    const clientId = (await server.ctx.audit.list({ type: 'api_client.created', limit: 1 }))[0]!.subject!;
    const subject = page.locator('td[data-label="Subject"] .short-id');
    assert.equal(await subject.locator('code').textContent(), `${clientId.slice(0, 12)}…`);
    assert.equal(await subject.locator('code').getAttribute('title'), clientId);
    await subject.getByRole('button', { name: 'Copy' }).click();
    await waitForClipboard(page, clientId);
  });
});
