import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { sql } from 'kysely';
import { MAINTAIN_AFTER_CHUNKS } from './knowledge.service.ts';

const ACTOR = { actor: 'test' };
const SECTIONS = 50;

/** A source of SECTIONS short sections, each its own passage. */
const article = (n: number, process = 'washed') =>
  Array.from(
    { length: SECTIONS },
    (_, i) => `## Lot ${n}-${i}\n\nHarvest ${n} section ${i}: ${process} beans, dried on raised beds.`,
  ).join('\n\n');

// Index upkeep after bulk indexing (docs/knowledge.md "Index upkeep"): once MAINTAIN_AFTER_CHUNKS passages were
// indexed, the service itself analyses the PostgreSQL tables. SQLite has none (FTS5 merges its segments itself).
for (const database of TEST_DATABASES.filter((d) => d === 'postgres')) {
  describe(`knowledge index upkeep (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ database });
    });
    after(() => server.close());

    /** The planner's idea of the table's size: -1 until the table was first analysed (PostgreSQL `pg_class`). */
    const plannedRows = async () =>
      Number(
        (
          await sql<{
            n: number;
          }>`select reltuples as n from pg_class where oid = 'knowledge_chunks'::regclass`.execute(
            server.ctx.store.db,
          )
        ).rows[0]!.n,
      );

    it('analyses the knowledge tables once a bulk of passages was indexed', async () => {
      const company = (await server.ctx.companies.create('Bulk')).id;
      let indexed = 0;
      let n = 0;
      // Every source but the one that reaches the mark: no upkeep yet.
      while (indexed + SECTIONS < MAINTAIN_AFTER_CHUNKS) {
        const source = await server.ctx.knowledge.create(
          company,
          { kind: 'text', title: `Harvest ${n}`, content: article(n++) },
          ACTOR,
        );
        assert.equal(source.chunks, SECTIONS);
        indexed += source.chunks;
      }
      const last = await server.ctx.knowledge.create(
        company,
        { kind: 'text', title: `Harvest ${n}`, content: article(n, 'anaerobic') },
        ACTOR,
      );
      indexed += last.chunks;
      assert.ok(indexed >= MAINTAIN_AFTER_CHUNKS);
      assert.equal(await plannedRows(), indexed);
      // The search reads the tidied index like any other.
      const found = await server.ctx.knowledge.search(company, 'anaerobic beans', { limit: 3 });
      assert.equal(found[0]?.sourceId, last.id);
    });
  });
}
