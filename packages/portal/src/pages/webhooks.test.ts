import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { createConversation, newVisitor } from '@parley/testing/webchat/webchat-fixtures';
import { startWebhookSink, verifyDelivery, type WebhookSink } from '@parley/testing/webhooks/webhook-sink';

describe('portal in a browser: webhooks page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  let sink: WebhookSink;
  before(async () => {
    sink = await startWebhookSink();
    ({ server, browser, companyId } = await startPortalPage({ section: 'Webhooks' }));
  });
  after(async () => {
    await closePortalPage({ server, browser });
    await sink.close();
  });

  it('creates a webhook (secret shown once), shows deliveries, retries one, rotates the secret and deletes', async () => {
    const { page } = browser;
    await page.getByLabel('URL').fill(sink.url);
    await page.getByLabel('conversation.created').check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = (await page.getByTestId('webhook-secret').textContent())!.trim();
    assert.match(secret, /^whsec_/);
    await page.getByRole('button', { name: 'I have stored the secret' }).click();
    const row = page.getByRole('row').filter({ hasText: sink.url });
    await row.getByText('Enabled').waitFor();

    await createConversation(server, newVisitor(companyId));
    await waitFor('the delivery', () => sink.received.length >= 1);
    verifyDelivery(secret, sink.received[0]!);
    const [webhook] = await server.ctx.webhooks.service.list(companyId);
    await waitFor('its outcome recorded', async () => {
      const [d] = await server.ctx.webhooks.service.deliveries(companyId, webhook!.id);
      return d?.status === 'delivered';
    });

    await row.getByRole('button', { name: `Deliveries of ${sink.url}` }).click();
    const delivery = page
      .getByRole('region', { name: `Deliveries to ${sink.url}` })
      .getByRole('row')
      .filter({ hasText: 'conversation.created' });
    await delivery.getByRole('cell', { name: 'delivered' }).waitFor();
    await delivery.getByRole('button', { name: /^Retry delivery/ }).click();
    await page.getByText('Delivery of conversation.created queued again.').waitFor();
    await waitFor('the retried delivery', () => sink.received.length >= 2);
    assert.equal(sink.received[1]!.headers['webhook-id'], sink.received[0]!.headers['webhook-id']);

    await row.getByRole('button', { name: `Rotate secret of ${sink.url}` }).click();
    const rotated = (await page.getByTestId('webhook-secret').textContent())!.trim();
    assert.notEqual(rotated, secret);
    await screenshot(page, 'webhooks');
    await page.getByRole('button', { name: 'I have stored the secret' }).click();
    assert.ok(!(await page.content()).includes(secret.slice(6)), 'no secret stays on the page');

    await row.getByRole('button', { name: `Delete ${sink.url}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByText('No webhooks yet.').waitFor();
    assert.deepEqual(await server.ctx.webhooks.service.list(companyId), []);
  });
});
