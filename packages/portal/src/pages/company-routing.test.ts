import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';

// Settings → Company: routing (agent capacity, business hours) and canned responses (docs/routing.md).
describe('portal in a browser: company routing and canned responses', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({ section: 'Company' }));
  });
  after(() => closePortalPage({ server, browser }));

  it('saves the capacity and a business-hours schedule, and refuses an unknown time zone', async () => {
    const { page } = browser;
    const routing = page.getByRole('region', { name: 'Routing and business hours' });
    await routing.getByLabel('Open conversations per agent').fill('5');
    await routing.getByLabel('Use business hours').check();
    await routing.getByLabel('Time zone').fill('Mars/Olympus');
    await routing.getByLabel('Monday').fill('09:00-12:00, 13:00-17:00');
    await routing.getByLabel('Holidays').fill('2026-12-25');
    await routing.getByRole('button', { name: 'Save routing' }).click();
    await routing.getByText('The business hours are not valid.').waitFor();

    await routing.getByLabel('Time zone').fill('Europe/Berlin');
    await routing.getByRole('button', { name: 'Save routing' }).click();
    await page.getByText('Routing saved.').waitFor();
    const saved = await server.ctx.webchat.routingSettings.get(companyId);
    assert.equal(saved.agentCapacity, 5);
    assert.deepEqual(saved.businessHours, {
      time_zone: 'Europe/Berlin',
      weekly: {
        mon: [
          { from: '09:00', to: '12:00' },
          { from: '13:00', to: '17:00' },
        ],
      },
      holidays: ['2026-12-25'],
    });
    await routing
      .locator('.opening')
      .filter({ hasText: /Agents are (in now|away)/ })
      .waitFor();
    await screenshot(page, 'company-routing');
  });

  it('adds and deletes canned responses, with a taken shortcut shown at its field', async () => {
    const { page } = browser;
    const canned = page.getByRole('region', { name: 'Canned responses' });
    const add = async (shortcut: string, title: string) => {
      await canned.getByLabel('Shortcut').fill(shortcut);
      await canned.getByLabel('Title').fill(title);
      await canned.getByLabel('Text (markdown)').fill(`About **${title}**.`);
      await canned.getByRole('button', { name: 'Add canned response' }).click();
    };
    await add('refund', 'Refunds');
    await canned.locator('li[data-shortcut="refund"]').waitFor();
    await add('refund', 'Again');
    await canned.locator('.field.invalid .field-error').waitFor();
    assert.equal((await server.ctx.webchat.cannedResponses.list(companyId)).length, 1);
    await screenshot(page, 'company-canned');
    await canned.getByRole('button', { name: 'Delete /refund' }).click();
    await canned.getByText('No canned responses yet.').waitFor();
  });
});
