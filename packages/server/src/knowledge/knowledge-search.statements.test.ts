import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../storage/schema.ts';
import { KnowledgeService } from './knowledge.service.ts';

const ACTOR = { actor: 'test' };

/** The statements run through `db`, counted as each one's result comes back. */
function counting(db: Kysely<Database>): { db: Kysely<Database>; count: () => number } {
  let statements = 0;
  return {
    db: db.withPlugin({
      transformQuery: ({ node }) => node,
      transformResult: async ({ result }) => {
        statements++;
        return result;
      },
    }),
    count: () => statements,
  };
}

/** The server's knowledge service as the server wires it, over a store that counts its statements. */
function countedKnowledge(server: TestServer): { knowledge: KnowledgeService; count: () => number } {
  const counted = counting(server.ctx.store.db);
  const knowledge = new KnowledgeService(
    counted.db,
    server.ctx.store.dialect,
    server.ctx.audit,
    fetch,
    server.ctx.knowledge.settings,
    server.ctx.companies.cache,
  );
  return { knowledge, count: counted.count };
}

// Each statement of a search is a trip through the store's pool and an event-loop turn (docs/knowledge.md "Measuring
// it"): the vocabulary is read in one statement however many words are misspelt, and on PostgreSQL both full-text
// matches (every word, then any) are one statement.
for (const database of TEST_DATABASES) {
  describe(`statements of one knowledge search (${database})`, () => {
    let server: TestServer;
    let company: string;
    let statements: () => number;
    let search: (query: string) => Promise<string[]>;

    before(async () => {
      server = await startTestServer({ database });
      company = (await server.ctx.companies.create('Statements')).id;
      const add = (title: string, content: string) =>
        server.ctx.knowledge.create(company, { kind: 'text', title, content }, ACTOR);
      await add('Warranty', '# Warranty\n\nEvery espresso machine carries a two year warranty.');
      await add('Descaling', '# Descaling\n\nDescale the machine every month with citric acid.');
      await add('Invoices', '# Invoices\n\nDownload an invoice for any order from your account page.');
      const counted = countedKnowledge(server);
      statements = counted.count;
      const { knowledge } = counted;
      search = async (query) => (await knowledge.search(company, query, { limit: 5 })).map((p) => p.title);
    });
    after(() => server.close());

    const counted = async (query: string) => {
      const before = statements();
      const titles = await search(query);
      return { titles, statements: statements() - before };
    };

    it('reads the vocabulary in one statement, however many words are misspelt', async () => {
      const spelt = await counted('download invoice warranty descaling');
      const misspelt = await counted('dowload invoce waranty descalng');
      assert.deepEqual(misspelt.titles, spelt.titles);
      assert.equal(misspelt.statements, spelt.statements);
    });

    it('runs the vocabulary and both full-text matches in as few statements as the store allows', async () => {
      // No passage holds every word, so the match of any word runs too: PostgreSQL asks both in one statement,
      // SQLite (in process, no pool) in two.
      const { titles, statements } = await counted('warranty on an invoice');
      assert.deepEqual(titles.slice(0, 2).sort(), ['Invoices', 'Warranty']);
      assert.equal(statements, database === 'postgres' ? 2 : 3);
    });

    it("reads the company's synonyms in the vocabulary statement: they cost a search no statement", async () => {
      const plain = await counted('descale');
      await server.ctx.knowledge.setSynonyms(
        company,
        { synonyms: [{ terms: ['decalcify', 'citric acid'] }] },
        ACTOR,
      );
      try {
        const expanded = await counted('decalcify');
        assert.deepEqual(expanded.titles, ['Descaling'], 'found through the company synonym');
        assert.equal(expanded.statements, plain.statements);
        const both = await counted('warranty on an invoice');
        assert.equal(both.statements, database === 'postgres' ? 2 : 3);
      } finally {
        await server.ctx.knowledge.setSynonyms(company, { synonyms: [] }, ACTOR);
      }
    });
  });
}

// Every digital employee's reply asks whether the company has a ready source before it searches (docs/knowledge.md
// "Cited answers"); the answer is kept in the company cache and dropped by every change to the company's sources.
for (const database of TEST_DATABASES) {
  describe(`whether a company has knowledge (${database})`, () => {
    let server: TestServer;
    let company: string;
    let statements: () => number;
    let knowledge: KnowledgeService;
    before(async () => {
      // PostgreSQL keeps nothing in the company cache unless its nodes hear each other's changes (Redis).
      server = await startTestServer({ database, redis: database === 'postgres' });
      company = (await server.ctx.companies.create('Ready sources')).id;
      const counted = countedKnowledge(server);
      statements = counted.count;
      knowledge = counted.knowledge;
    });
    after(() => server.close());

    const asked = async () => {
      const before = statements();
      const has = await knowledge.hasSources(company);
      return { has, statements: statements() - before };
    };

    it('is read once, then answered from the cache until a source is added, edited or deleted', async () => {
      assert.deepEqual(await asked(), { has: false, statements: 1 });
      assert.deepEqual(await asked(), { has: false, statements: 0 });
      const source = await knowledge.create(
        company,
        { kind: 'text', title: 'Hours', content: '# Hours\n\nOpen from nine to five.' },
        ACTOR,
      );
      assert.deepEqual(await asked(), { has: true, statements: 1 });
      assert.deepEqual(await asked(), { has: true, statements: 0 });
      await knowledge.update(
        company,
        source.id,
        { kind: 'text', title: 'Hours', content: '# Hours\n\nOpen from eight to six.' },
        ACTOR,
      );
      assert.deepEqual(await asked(), { has: true, statements: 1 });
      await knowledge.delete(company, source.id, ACTOR);
      assert.deepEqual(await asked(), { has: false, statements: 1 });
    });
  });
}

// Without its pending list the GIN index is all a match reads; with it, every search also read the whole unsorted
// list and the planner preferred scanning every passage of the company
// (packages/server/src/storage/migrations/300_knowledge_search_index_direct.ts).
describe('the passages’ full-text index on PostgreSQL', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ database: 'postgres' });
  });
  after(() => server.close());

  it('is written directly, with no pending list', async () => {
    const { rows } = await sql<{ options: string[] | null }>`
      select reloptions as options from pg_class where oid = 'knowledge_chunks_search'::regclass`.execute(
      server.ctx.store.db,
    );
    assert.deepEqual(rows[0]?.options, ['fastupdate=off']);
  });
});

// Each search's vocabulary statement counts the company's ready sources and reads the typo candidates of the words
// the vocabulary lacks through indexes that hold every column it reads
// (packages/server/src/storage/migrations/320_knowledge_search_lookups.ts); with them the candidates come back in
// another order than before, so a tie between equally near words is decided in code, not by that order.
for (const database of TEST_DATABASES) {
  describe(`the vocabulary's lookups (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ database });
    });
    after(() => server.close());

    it('have an index of their own each', async () => {
      const db = server.ctx.store.db;
      const { rows } =
        database === 'postgres'
          ? await sql<{ name: string }>`
              select indexname as name from pg_indexes
              where tablename in ('knowledge_sources', 'knowledge_terms') and schemaname = current_schema()`.execute(
              db,
            )
          : await sql<{ name: string }>`
              select name from sqlite_master
              where type = 'index' and tbl_name in ('knowledge_sources', 'knowledge_terms')`.execute(db);
      const names = rows.map((r) => r.name);
      assert.ok(names.includes('knowledge_sources_ready'), names.join());
      assert.ok(names.includes('knowledge_terms_near'), names.join());
      assert.ok(!names.includes('knowledge_terms_initial'), 'the narrower index is gone');
    });

    it('correct a word two company words are equally near to the one first in code-point order', async () => {
      const company = (await server.ctx.companies.create('Ties')).id;
      const add = (title: string, content: string) =>
        server.ctx.knowledge.create(company, { kind: 'text', title, content }, ACTOR);
      // Added first, so the vocabulary's insertion order (the old index's) would have chosen it.
      await add('Monile', '# Monile\n\nThe monile grade is sorted by hand.');
      await add('Mobule', '# Mobule\n\nThe mobule grade is sorted by machine.');
      const passages = await server.ctx.knowledge.search(company, 'mobile', { limit: 5 });
      assert.deepEqual(
        passages.map((p) => p.title),
        ['Mobule'],
      );
    });
  });
}
