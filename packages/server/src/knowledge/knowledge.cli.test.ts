import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runParley, runParleyInProcess } from '@parley/testing/cli';
import { TEST_DATABASES } from '@parley/testing/databases';
import {
  LEGAL_SOURCE,
  pdfWith,
  RETURNS_ARTICLE,
  startPageServer,
} from '@parley/testing/knowledge/knowledge-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';

// `parley knowledge add|list|search|delete` (docs/knowledge.md), on both stores.
for (const database of TEST_DATABASES) {
  describe(`knowledge CLI (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    let pages: Awaited<ReturnType<typeof startPageServer>>;
    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('CLI knowledge')).id;
      pages = await startPageServer({
        '/faq': {
          type: 'text/markdown',
          body: '# FAQ\n\n## Opening hours\n\nThe shop opens at nine on weekdays.',
        },
      });
    });
    after(async () => {
      await server.close();
      await pages.close();
    });

    it('adds files and pages, lists, searches like the route, deletes', async () => {
      const md = join(server.dataDir, 'returns.md');
      writeFileSync(md, RETURNS_ARTICLE);
      const added = await runParley(server, [
        'knowledge',
        'add',
        '--company',
        companyId,
        '--file',
        md,
        '--json',
      ]);
      assert.equal(added.code, 0, added.stderr);
      assert.equal(added.json.title, 'Returns and refunds');
      assert.equal(added.json.status, 'ready');
      assert.equal(added.json.chunks, 3);

      const pdf = join(server.dataDir, 'care.pdf');
      writeFileSync(pdf, pdfWith(['Caring for paperbacks', 'Keep paperbacks away from direct sunlight.']));
      const fromPdf = await runParleyInProcess(server, [
        'knowledge',
        'add',
        '--company',
        companyId,
        '--file',
        pdf,
        '--title',
        'Book care',
        '--json',
      ]);
      assert.equal(fromPdf.code, 0, fromPdf.stderr);
      assert.equal(fromPdf.json.content_type, 'application/pdf');

      const page = await runParleyInProcess(server, [
        'knowledge',
        'add',
        '--company',
        companyId,
        '--url',
        `${pages.url}/faq`,
        '--json',
      ]);
      assert.equal(page.code, 0, page.stderr);
      assert.equal(page.json.title, 'FAQ');
      assert.equal(page.json.url, `${pages.url}/faq`);

      const listed = await runParleyInProcess(server, [
        'knowledge',
        'list',
        '--company',
        companyId,
        '--json',
      ]);
      assert.deepEqual(
        listed.json.sources.map((s: { id: string }) => s.id).sort(),
        [added.json.id, fromPdf.json.id, page.json.id].sort(),
      );

      const found = await runParleyInProcess(server, [
        'knowledge',
        'search',
        '--company',
        companyId,
        '--query',
        'when does the shop open?',
        '--json',
      ]);
      assert.equal(found.code, 0, found.stderr);
      assert.equal(found.json.results[0].source_id, page.json.id);
      assert.equal(found.json.results[0].title, 'FAQ › Opening hours');
      assert.deepEqual(Object.keys(found.json.results[0]).sort(), [
        'score',
        'snippet',
        'source_id',
        'title',
        'url',
      ]);

      const deleted = await runParleyInProcess(server, [
        'knowledge',
        'delete',
        '--company',
        companyId,
        '--source-id',
        page.json.id,
      ]);
      assert.equal(deleted.code, 0, deleted.stderr);
      const again = await runParleyInProcess(server, [
        'knowledge',
        'search',
        '--company',
        companyId,
        '--query',
        'shop opens weekdays',
        '--json',
      ]);
      assert.equal(
        again.json.results.filter((r: { source_id: string }) => r.source_id === page.json.id).length,
        0,
      );

      const neither = await runParleyInProcess(server, [
        'knowledge',
        'add',
        '--company',
        companyId,
        '--json',
      ]);
      assert.notEqual(neither.code, 0);
      assert.equal(neither.json.error.code, 'invalid_knowledge_source');
      const missing = await runParleyInProcess(server, [
        'knowledge',
        'delete',
        '--company',
        companyId,
        '--source-id',
        page.json.id,
        '--json',
      ]);
      assert.equal(missing.json.error.code, 'knowledge_source_not_found');
    });

    it('sets, prints and removes company synonyms; the next search uses them', async () => {
      await server.ctx.knowledge.create(companyId, LEGAL_SOURCE, { actor: 'test' });
      const search = async () =>
        (
          await runParleyInProcess(server, [
            'knowledge',
            'search',
            '--company',
            companyId,
            '--query',
            'kvk',
            '--json',
          ])
        ).json.results.map((r: { title: string }) => r.title);
      assert.deepEqual(await search(), []);
      const file = join(server.dataDir, 'synonyms.json');
      /** `knowledge synonyms set` with the list written to a file, as an operator would. */
      const setFromFile = (synonyms: { terms: string[] }[]) => {
        writeFileSync(file, JSON.stringify({ synonyms }));
        const args = ['knowledge', 'synonyms', 'set', '--company', companyId, '--file', file, '--json'];
        return runParleyInProcess(server, args);
      };
      const set = await setFromFile([{ terms: ['kvk', 'chamber of commerce'] }]);
      assert.equal(set.code, 0, set.stderr);
      assert.deepEqual(set.json.synonyms, [{ terms: ['kvk', 'chamber of commerce'] }]);
      assert.deepEqual(await search(), ['Legal']);
      const shown = await runParleyInProcess(server, ['knowledge', 'synonyms', '--company', companyId]);
      assert.equal(shown.stdout.trim(), 'kvk = chamber of commerce');

      const refused = await setFromFile([{ terms: ['kvk'] }]);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr + refused.stdout, /invalid_knowledge_synonyms/);

      assert.equal((await setFromFile([])).code, 0);
      assert.deepEqual(await search(), []);
    });
  });
}
