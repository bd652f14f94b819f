import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot } from '@parley/testing/portal/browser';
import { requestToken } from '@parley/testing/portal/portal-fixtures';
import { closePortalPage, type PortalPage, startPortalPage } from '@parley/testing/portal/portal-page';

describe('portal in a browser: an API client’s secrets and quotas', () => {
  let portal: PortalPage;
  let clientId: string;
  let firstSecret: string;
  before(async () => {
    portal = await startPortalPage({
      section: 'API clients',
      seed: async (server, companyId) => {
        const { client, secret } = await server.ctx.oauth.clients.create({
          companyId,
          name: 'CRM sync',
          scopes: ['connector:read'],
        });
        clientId = client.clientId;
        firstSecret = secret;
      },
    });
  });
  after(() => closePortalPage(portal));

  it('adds a second secret shown once; both work; last use shows; revoking the old one stops it at once', async () => {
    const { page } = portal.browser;
    const { server } = portal;
    assert.equal((await requestToken(server, clientId, firstSecret)).status, 200);
    await page.getByRole('button', { name: 'Secrets of CRM sync' }).click();
    const section = page.getByRole('region', { name: 'Secrets and quotas of “CRM sync”' });
    await section.waitFor();
    // One working secret: it cannot be revoked before another exists.
    await section.getByText('Its only secret: add one first').waitFor();

    await section.getByLabel('The secrets in use keep working for').selectOption({ label: '1 day' });
    await section.getByRole('button', { name: 'Add a second secret' }).click();
    const secretEl = page.getByTestId('rotated-secret');
    await secretEl.waitFor();
    const secondSecret = (await secretEl.textContent())!.trim();
    assert.match(secondSecret, /^pcs_/);
    await screenshot(page, 'api-client-secrets-rotated');
    // Both secrets work during the overlap.
    assert.equal((await requestToken(server, clientId, firstSecret)).status, 200);
    assert.equal((await requestToken(server, clientId, secondSecret)).status, 200);

    // After a reload the new secret is gone from the page; the list shows both with their last use.
    await server.ctx.oauth.clients.flushUsage();
    await page.reload();
    await page.getByRole('button', { name: 'Secrets of CRM sync' }).click();
    const rows = section.getByRole('table').getByRole('row');
    await rows.nth(2).waitFor();
    assert.equal(await rows.count(), 3, 'a header and two secrets');
    assert.ok(!(await page.content()).includes(secondSecret), 'the new secret is shown once only');
    for (const i of [1, 2])
      assert.notEqual(await rows.nth(i).getByRole('cell').nth(3).textContent(), 'Never');
    const oldRow = rows.nth(1);
    assert.notEqual(await oldRow.getByRole('cell').nth(2).textContent(), 'Never', 'the old secret expires');
    const oldId = (await oldRow.locator('code').textContent())!.trim();

    await oldRow.getByRole('button', { name: `Revoke ${oldId}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke secret' }).click();
    await page.getByText(`Revoked ${oldId}.`).waitFor();
    await section.getByText('Its only secret: add one first').waitFor();
    assert.equal((await requestToken(server, clientId, firstSecret)).status, 401);
    assert.equal((await requestToken(server, clientId, secondSecret)).status, 200);
  });

  it('sets the client’s quotas; an empty field means the default', async () => {
    const { page } = portal.browser;
    const section = page.getByRole('region', { name: 'Secrets and quotas of “CRM sync”' });
    await section.getByLabel('Token requests per minute').fill('0');
    await section.getByRole('button', { name: 'Save quotas' }).click();
    await section.getByText('A whole number from 1, or empty for the default.').first().waitFor();
    await section.getByLabel('Token requests per minute').fill('120');
    await section.getByLabel('API calls per minute').fill('');
    await section.getByRole('button', { name: 'Save quotas' }).click();
    await page.getByText('Saved the quotas of “CRM sync”.').waitFor();
    const stored = await portal.server.ctx.oauth.clients.find(clientId);
    assert.deepEqual(stored?.quotas, { tokensPerMinute: 120, apiCallsPerMinute: null });
    const token = await requestToken(portal.server, clientId, (await rotatedSecretOf(portal, clientId))!);
    assert.equal(token.headers.get('ratelimit-policy'), '"tokens";q=120;w=60');
  });
});

/** A fresh secret for the client through the service, to see the quota at the token endpoint. */
async function rotatedSecretOf(portal: PortalPage, clientId: string): Promise<string | undefined> {
  const rotated = await portal.server.ctx.oauth.clients.rotateSecret({
    companyId: portal.companyId,
    clientId,
    oldExpiresInSeconds: 3600,
  });
  return rotated.client_secret;
}
