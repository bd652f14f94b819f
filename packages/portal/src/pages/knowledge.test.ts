import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LEGAL_SOURCE } from '@parley/testing/knowledge/knowledge-fixtures';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';

// Settings → Knowledge (docs/knowledge.md) in Chromium: add a source, see its passages, search, edit (re-index),
// delete — each checked against the knowledge service itself.
describe('portal in a browser: knowledge page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({ section: 'Knowledge' }));
  });
  after(() => closePortalPage({ server, browser }));

  it('adds, shows passages, searches, edits and deletes a source', async () => {
    const { page } = browser;
    await page.getByText('No knowledge yet.').waitFor();
    await page.getByLabel('Title').fill('Opening hours');
    await page.getByLabel('URL (optional; required to fetch)').fill('https://help.example/hours');
    await page
      .getByLabel('Content')
      .fill(
        '# Opening hours\n\n## Weekdays\n\nThe shop opens at nine.\n\n## Saturdays\n\nThe shop opens at ten.',
      );
    await page.getByRole('button', { name: 'Save source' }).click();
    await page.getByText('“Opening hours” is indexed: 2 passages.').waitFor();
    const [source] = await server.ctx.knowledge.list(companyId);
    assert.equal(source?.chunks, 2);

    await page.getByRole('button', { name: 'Passages of Opening hours' }).click();
    const passages = page.getByRole('region', { name: 'Passages of Opening hours' });
    await passages.getByText('Opening hours › Saturdays').waitFor();

    await page.getByLabel('Question').fill('when does the shop open on saturdays');
    await page.getByRole('button', { name: 'Search' }).click();
    await page
      .locator('.search-results li')
      .first()
      .filter({ hasText: 'Opening hours › Saturdays' })
      .waitFor();
    await screenshot(page, 'knowledge');

    await page.getByRole('button', { name: 'Edit Opening hours' }).click();
    await page.getByLabel('Content').fill('The shop opens at eight every day.');
    await page.getByLabel('Format').selectOption('text/plain');
    await page.getByRole('button', { name: 'Save source' }).click();
    await page.getByText('“Opening hours” is indexed: 1 passages.').waitFor();
    const results = await server.ctx.knowledge.search(companyId, 'shop opens eight');
    assert.equal(results[0]?.sourceId, source!.id);
    assert.equal((await server.ctx.knowledge.list(companyId)).length, 1, 'edited in place');

    await page.getByRole('button', { name: 'Delete Opening hours' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete source' }).click();
    await page.getByText('No knowledge yet.').waitFor();
    assert.deepEqual(await server.ctx.knowledge.search(companyId, 'shop opens eight'), []);
  });

  it('edits the company synonyms, one group a line, and search uses them', async () => {
    const { page } = browser;
    await server.ctx.knowledge.create(companyId, LEGAL_SOURCE, { actor: 'test' });
    assert.deepEqual(await server.ctx.knowledge.search(companyId, 'kvk'), []);
    const field = page.getByLabel('Synonyms (one group a line, terms separated by commas)');
    await field.fill('kvk, chamber of commerce\ncash on delivery, pay on arrival');
    await page.getByRole('button', { name: 'Save synonyms' }).click();
    await page.getByText('Synonyms saved: 2 groups.').waitFor();
    assert.deepEqual((await server.ctx.knowledge.synonyms(companyId)).synonyms, [
      { terms: ['kvk', 'chamber of commerce'] },
      { terms: ['cash on delivery', 'pay on arrival'] },
    ]);
    assert.equal((await server.ctx.knowledge.search(companyId, 'kvk'))[0]?.title, 'Legal');

    await field.fill('kvk');
    await page.getByRole('button', { name: 'Save synonyms' }).click();
    await page.getByText(/must be an array of 2 to 10 terms/).waitFor();
    assert.equal((await server.ctx.knowledge.synonyms(companyId)).synonyms.length, 2, 'unchanged');

    await field.fill('kvk, chamber of commerce');
    await page.getByRole('button', { name: 'Save synonyms' }).click();
    await page.getByText('Synonyms saved: 1 group.', { exact: true }).waitFor();
    await field.fill('');
    await page.getByRole('button', { name: 'Save synonyms' }).click();
    await page.getByText('Synonyms removed.').waitFor();
    assert.deepEqual((await server.ctx.knowledge.synonyms(companyId)).synonyms, []);
  });
});
