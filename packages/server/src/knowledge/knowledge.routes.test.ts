import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import {
  knowledgeApi,
  knowledgeTenant,
  pdfWith,
  RETURNS_ARTICLE,
  SHIPPING_ARTICLE,
  startPageServer,
} from '@parley/testing/knowledge/knowledge-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

// The /platform/v1/knowledge routes of docs/knowledge.md, on both stores.
for (const database of TEST_DATABASES) {
  describe(`knowledge API (${database})`, () => {
    let server: TestServer;
    let tenant: Awaited<ReturnType<typeof knowledgeTenant>>;
    let other: Awaited<ReturnType<typeof knowledgeTenant>>;
    let pages: Awaited<ReturnType<typeof startPageServer>>;
    before(async () => {
      server = await startTestServer({ database, config: { knowledge: { maxSourceBytes: 64 * 1024 } } });
      tenant = await knowledgeTenant(server);
      other = await knowledgeTenant(server);
      pages = await startPageServer({
        '/help/warranty': {
          type: 'text/html; charset=utf-8',
          body: '<html><head><title>Warranty</title></head><body><h1>Warranty</h1><p>Every kettle carries a two year warranty against manufacturing faults.</p></body></html>',
        },
        '/help/manual.pdf': {
          type: 'application/pdf',
          body: pdfWith(['Descaling the kettle', 'Use citric acid monthly to descale the kettle.']),
        },
        '/help/huge': { type: 'text/plain', body: 'x '.repeat(40 * 1024) },
        '/help/gone': { type: 'text/plain', body: 'gone', status: 410 },
      });
    });
    after(async () => {
      await server.close();
      await pages.close();
    });

    it('adds a markdown source, indexes it by headings, searches it; another company sees nothing', async () => {
      const created = await knowledgeApi(server, tenant.auth, 'POST', '/sources', {
        title: 'Returns and refunds',
        content: RETURNS_ARTICLE,
        url: 'https://help.example/returns',
      });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(Object.keys(created.body).sort(), [
        'chunks',
        'content_type',
        'created_at',
        'id',
        'status',
        'title',
        'updated_at',
        'url',
      ]);
      assert.equal(created.body.status, 'ready');
      assert.equal(created.body.content_type, 'text/markdown');
      assert.equal(created.body.chunks, 3, 'intro, "Returning an item", "Refunds"');

      const found = await knowledgeApi(
        server,
        tenant.auth,
        'GET',
        `/search?q=${encodeURIComponent('When do I get my refund?')}`,
      );
      assert.equal(found.status, 200, found.text);
      const best = found.body.results[0];
      assert.equal(best.source_id, created.body.id);
      assert.equal(best.title, 'Returns and refunds › Refunds', 'the heading path is kept');
      assert.equal(best.url, 'https://help.example/returns');
      assert.match(best.snippet, /five working/);
      assert.ok(best.score > 0 && best.score <= 1);
      assert.deepEqual(Object.keys(best).sort(), ['score', 'snippet', 'source_id', 'title', 'url']);

      const limited = await knowledgeApi(
        server,
        tenant.auth,
        'GET',
        '/search?q=return%20refund%20parcel&limit=1',
      );
      assert.equal(limited.body.results.length, 1);
      assert.equal((await knowledgeApi(server, tenant.auth, 'GET', '/search?q=x&limit=21')).status, 400);

      assert.deepEqual((await knowledgeApi(server, other.auth, 'GET', '/search?q=refund')).body, {
        results: [],
      });
      assert.deepEqual((await knowledgeApi(server, other.auth, 'GET', '/sources')).body, { sources: [] });
      for (const method of ['GET', 'DELETE'])
        assert.equal(
          (await knowledgeApi(server, other.auth, method, `/sources/${created.body.id}`)).status,
          404,
        );
      const put = await knowledgeApi(server, other.auth, 'PUT', `/sources/${created.body.id}`, {
        title: 'x',
        content: 'y',
      });
      assert.equal(put.status, 404);
      assert.equal(put.body.code, 'knowledge_source_not_found');

      const listed = await knowledgeApi(server, tenant.auth, 'GET', '/sources');
      assert.ok(listed.body.sources.some((s: { id: string }) => s.id === created.body.id));
      const read = await knowledgeApi(server, tenant.auth, 'GET', `/sources/${created.body.id}`);
      assert.deepEqual(read.body, created.body);
    });

    it('re-indexes on PUT and never finds a deleted source again', async () => {
      const created = await knowledgeApi(server, tenant.auth, 'POST', '/sources', {
        title: 'Gift wrapping',
        content: 'We wrap presents in recycled kraft paper for two euros.',
        content_type: 'text/plain',
      });
      assert.equal(created.status, 201, created.text);
      const hits = async (q: string) =>
        (
          await knowledgeApi(server, tenant.auth, 'GET', `/search?q=${encodeURIComponent(q)}`)
        ).body.results.filter((r: { source_id: string }) => r.source_id === created.body.id).length;
      assert.equal(await hits('kraft paper wrapping'), 1);

      const updated = await knowledgeApi(server, tenant.auth, 'PUT', `/sources/${created.body.id}`, {
        title: 'Gift wrapping',
        content: 'Presents are wrapped in linen cloth bags, free of charge.',
        content_type: 'text/plain',
      });
      assert.equal(updated.status, 200, updated.text);
      assert.equal(updated.body.status, 'ready');
      assert.equal(await hits('kraft paper'), 0, 'the old text is gone');
      assert.equal(await hits('linen cloth bags'), 1);

      const deleted = await knowledgeApi(server, tenant.auth, 'DELETE', `/sources/${created.body.id}`);
      assert.equal(deleted.status, 204);
      assert.equal(await hits('linen cloth bags'), 0);
      assert.equal(
        (await knowledgeApi(server, tenant.auth, 'GET', `/sources/${created.body.id}`)).status,
        404,
      );
      const chunks = await server.ctx.store.db
        .selectFrom('knowledge_chunks')
        .select('id')
        .where('source_id', '=', created.body.id)
        .execute();
      assert.equal(chunks.length, 0, 'the passages went with the source');
      const audit = await server.ctx.audit.list({ companyId: tenant.companyId, subject: created.body.id });
      assert.deepEqual(audit.map((e) => e.type).sort(), [
        'knowledge.source_created',
        'knowledge.source_deleted',
        'knowledge.source_updated',
      ]);
    });

    it('takes HTML, and files (markdown and PDF) as multipart', async () => {
      const html = await knowledgeApi(server, tenant.auth, 'POST', '/sources', {
        title: 'Shipping',
        content: SHIPPING_ARTICLE,
        content_type: 'text/html',
      });
      assert.equal(html.status, 201, html.text);
      assert.equal(html.body.chunks, 2);
      const customs = await knowledgeApi(server, tenant.auth, 'GET', '/search?q=customs%20duties');
      assert.equal(customs.body.results[0].title, 'Shipping › International shipping');
      assert.match(customs.body.results[0].snippet, /recipient & depend/, 'entities decoded, tags gone');

      const form = new FormData();
      form.set('file', new Blob([RETURNS_ARTICLE], { type: 'text/markdown' }), 'returns.md');
      form.set('url', 'https://help.example/returns.md');
      const file = await knowledgeApi(server, tenant.auth, 'POST', '/sources', form);
      assert.equal(file.status, 201, file.text);
      assert.equal(file.body.title, 'Returns and refunds', 'the first heading names it');
      assert.equal(file.body.content_type, 'text/markdown');
      assert.equal(file.body.url, 'https://help.example/returns.md');

      const pdfForm = new FormData();
      pdfForm.set(
        'file',
        new Blob([new Uint8Array(pdfWith(['Loyalty stamps', 'Ten stamps earn a free paperback.']))], {
          type: 'application/pdf',
        }),
        'loyalty.pdf',
      );
      pdfForm.set('title', 'Loyalty card');
      const pdf = await knowledgeApi(server, tenant.auth, 'POST', '/sources', pdfForm);
      assert.equal(pdf.status, 201, pdf.text);
      assert.equal(pdf.body.content_type, 'application/pdf');
      assert.equal(pdf.body.status, 'ready');
      const stamps = await knowledgeApi(server, tenant.auth, 'GET', '/search?q=free%20paperback%20stamps');
      assert.equal(stamps.body.results[0].source_id, pdf.body.id);
    });

    it('fetches a page by URL through the outbound client; a failed fetch is a failed source', async () => {
      const fetched = await knowledgeApi(server, tenant.auth, 'POST', '/sources', {
        url: `${pages.url}/help/warranty`,
        fetch: true,
      });
      assert.equal(fetched.status, 201, fetched.text);
      assert.equal(fetched.body.status, 'ready');
      assert.equal(fetched.body.title, 'Warranty');
      assert.equal(fetched.body.content_type, 'text/html');
      const warranty = await knowledgeApi(server, tenant.auth, 'GET', '/search?q=kettle%20warranty');
      assert.equal(warranty.body.results[0].source_id, fetched.body.id);
      assert.equal(warranty.body.results[0].url, `${pages.url}/help/warranty`);

      // Refreshed on PUT: the page changed in between.
      pages.pages['/help/warranty'] = {
        type: 'text/plain',
        body: 'Every kettle now carries a five year warranty.',
      };
      const refreshed = await knowledgeApi(server, tenant.auth, 'PUT', `/sources/${fetched.body.id}`, {
        url: `${pages.url}/help/warranty`,
        fetch: true,
        title: 'Warranty',
      });
      assert.equal(refreshed.status, 200, refreshed.text);
      const five = await knowledgeApi(server, tenant.auth, 'GET', '/search?q=five%20year%20warranty');
      assert.match(five.body.results[0].snippet, /five year/);

      const pdf = await knowledgeApi(server, tenant.auth, 'POST', '/sources', {
        url: `${pages.url}/help/manual.pdf`,
        fetch: true,
      });
      assert.equal(pdf.body.status, 'ready', pdf.text);
      assert.equal(pdf.body.content_type, 'application/pdf');

      const gone = await knowledgeApi(server, tenant.auth, 'POST', '/sources', {
        url: `${pages.url}/help/gone`,
        fetch: true,
      });
      assert.equal(gone.status, 201);
      assert.equal(gone.body.status, 'failed');
      assert.equal(gone.body.error, 'fetch failed: HTTP 410');
      assert.equal(gone.body.chunks, 0);

      const huge = await knowledgeApi(server, tenant.auth, 'POST', '/sources', {
        url: `${pages.url}/help/huge`,
        fetch: true,
      });
      assert.equal(huge.body.status, 'failed');
      assert.match(huge.body.error, /larger than 65536 bytes/);
    });

    it('refuses bad input with documented codes, and checks scopes', async () => {
      const cases: Array<[unknown, number, string]> = [
        [{ content: 'no title' }, 400, 'invalid_knowledge_source'],
        [{ title: 'x', content: '   ' }, 400, 'invalid_knowledge_source'],
        [{ title: 'x', content: 'y', content_type: 'application/json' }, 400, 'invalid_knowledge_source'],
        [{ title: 'x', content: 'y', url: 'javascript:alert(1)' }, 400, 'invalid_knowledge_source'],
        [{ title: 'x', content: 'y', extra: 1 }, 400, 'invalid_knowledge_source'],
        [{ url: 'ftp://example.com/x', fetch: true }, 400, 'invalid_knowledge_source'],
        [{ title: 'x', content: 'y'.repeat(70 * 1024) }, 413, 'knowledge_source_too_large'],
      ];
      for (const [body, status, code] of cases) {
        const res = await knowledgeApi(server, tenant.auth, 'POST', '/sources', body);
        assert.equal(res.status, status, `${JSON.stringify(body).slice(0, 80)} → ${res.text}`);
        assert.equal(res.body.code, code);
      }
      const image = new FormData();
      image.set('file', new Blob([Buffer.from([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' }), 'a.png');
      const refused = await knowledgeApi(server, tenant.auth, 'POST', '/sources', image);
      assert.equal(refused.status, 415, refused.text);
      assert.equal(refused.body.code, 'knowledge_type_not_supported');
      assert.equal(
        (await knowledgeApi(server, tenant.auth, 'GET', `/sources/${UNKNOWN}`)).body.code,
        'knowledge_source_not_found',
      );
      assert.equal((await knowledgeApi(server, tenant.auth, 'GET', '/sources/not-a-uuid')).status, 404);

      const reader = await knowledgeTenant(server, ['knowledge:read']);
      const denied = await knowledgeApi(server, reader.auth, 'POST', '/sources', {
        title: 'x',
        content: 'y',
      });
      assert.equal(denied.status, 403);
      assert.equal((await knowledgeApi(server, reader.auth, 'GET', '/sources')).status, 200);
      assert.equal((await knowledgeApi(server, reader.auth, 'GET', '/search?q=x')).status, 200);
    });
  });
}
