import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { RETURNS_ARTICLE } from '@parley/testing/knowledge/knowledge-fixtures';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';

// Settings → Knowledge on /portal/api (packages/server/src/knowledge/knowledge.portal.routes.ts), on both stores.
for (const database of TEST_DATABASES) {
  describe(`portal knowledge (${database})`, () => {
    let server: TestServer;
    let acmeId: string;
    let acme: PortalTestClient;
    let globex: PortalTestClient;
    let agent: PortalTestClient;
    before(async () => {
      ({ server, acmeId, acme, globex, agent } = await startPortalWorld(database, {
        config: { knowledge: { maxSourceBytes: 64 * 1024 } },
      }));
    });
    after(() => server.close());

    it('adds, reads, searches, replaces and deletes a source of the admin’s company, audited as the user', async () => {
      const created = await acme.post('/knowledge/sources', { title: 'Returns', content: RETURNS_ARTICLE });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id;
      assert.equal(created.body.chunks, 3);
      assert.deepEqual(
        (await acme.get('/knowledge/sources')).body.sources.map((s: { id: string }) => s.id),
        [id],
      );
      const chunks = await acme.get(`/knowledge/sources/${id}/chunks`);
      assert.equal(chunks.status, 200, chunks.text);
      assert.equal(chunks.body.chunks.length, 3);
      const found = await acme.get(`/knowledge/search?q=${encodeURIComponent('When do I get my refund?')}`);
      assert.equal(found.status, 200, found.text);
      assert.equal(found.body.results[0].source_id, id);
      assert.match(found.body.results[0].snippet, /five working/);
      assert.equal((await acme.get('/knowledge/search?q=refund&limit=21')).status, 400);

      const replaced = await acme.put(`/knowledge/sources/${id}`, {
        title: 'Returns',
        content: '# Returns\n\nReturns are free within 60 days.',
      });
      assert.equal(replaced.status, 200, replaced.text);
      assert.equal(replaced.body.chunks, 1);

      assert.equal((await acme.del(`/knowledge/sources/${id}`)).status, 204);
      assert.deepEqual((await acme.get('/knowledge/sources')).body, { sources: [] });
      const events = await server.ctx.audit.list({ companyId: acmeId, subject: id });
      assert.deepEqual(events.map((e) => e.type).sort(), [
        'knowledge.source_created',
        'knowledge.source_deleted',
        'knowledge.source_updated',
      ]);
      assert.ok(events.every((e) => /^user:/.test(String(e.actor))));
    });

    it('keeps each company to its own sources, refuses agents, and bounds the body by the source limit', async () => {
      const created = await acme.post('/knowledge/sources', { title: 'Returns', content: RETURNS_ARTICLE });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id;
      assert.deepEqual((await globex.get('/knowledge/sources')).body, { sources: [] });
      assert.deepEqual((await globex.get('/knowledge/search?q=refund')).body, { results: [] });
      const foreign = await globex.del(`/knowledge/sources/${id}`);
      assert.equal(foreign.status, 404, foreign.text);
      assert.equal((await agent.get('/knowledge/sources')).status, 403);
      assert.equal((await agent.post('/knowledge/sources', { title: 'x', content: 'y' })).status, 403);
      const huge = await acme.post('/knowledge/sources', { title: 'Huge', content: 'x'.repeat(200 * 1024) });
      assert.equal(huge.status, 413, huge.text);
      assert.equal((await acme.get('/knowledge/sources')).body.sources.length, 1);
    });

    it("reads and replaces the admin's company synonyms only; agents are refused", async () => {
      const group = { terms: ['kvk', 'chamber of commerce'] };
      const saved = await acme.put('/knowledge/synonyms', { synonyms: [group] });
      assert.equal(saved.status, 200, saved.text);
      assert.deepEqual((await acme.get('/knowledge/synonyms')).body.synonyms, [group]);
      assert.deepEqual((await globex.get('/knowledge/synonyms')).body, { synonyms: [], updated_at: null });
      const invalid = await acme.put('/knowledge/synonyms', { synonyms: [{ terms: ['kvk'] }] });
      assert.equal(invalid.status, 400, invalid.text);
      assert.equal(invalid.body.code, 'invalid_knowledge_synonyms');
      assert.equal((await agent.get('/knowledge/synonyms')).status, 403);
      assert.equal((await agent.put('/knowledge/synonyms', { synonyms: [] })).status, 403);
      const events = await server.ctx.audit.list({ companyId: acmeId, subject: acmeId });
      assert.ok(
        events.some((e) => e.type === 'knowledge.synonyms_updated' && /^user:/.test(String(e.actor))),
      );
    });
  });
}
