import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { COMMON_MIN_SOURCES } from './vocabulary.ts';

const ACTOR = { actor: 'test' };

const WARRANTY = `# Warranty

Every espresso machine carries a two year warranty against manufacturing faults.`;
const DESCALING = `# Descaling

Descale the machine every month with citric acid so limescale does not build up.`;
const INVOICES = `# Invoices

Download an invoice for any order from your account page, under Orders.`;

// How the knowledge search ranks (docs/knowledge.md "Ranking" and "Misspelt words"), on both stores, through the
// service the route and the digital employees use.
for (const database of TEST_DATABASES) {
  describe(`knowledge ranking (${database})`, () => {
    let server: TestServer;
    let company: string;
    let other: string;
    const add = (companyId: string, title: string, content: string) =>
      server.ctx.knowledge.create(companyId, { kind: 'text', title, content }, ACTOR);
    const titles = async (companyId: string, query: string) =>
      (await server.ctx.knowledge.search(companyId, query, { limit: 5 })).map((p) => p.title);

    before(async () => {
      server = await startTestServer({ database });
      company = (await server.ctx.companies.create('Ranking')).id;
      other = (await server.ctx.companies.create('Other')).id;
      await add(company, 'Warranty', WARRANTY);
      await add(company, 'Descaling', DESCALING);
      await add(company, 'Invoices', INVOICES);
    });
    after(() => server.close());

    it('finds a word through its stem on both engines (descaling → descale, invoices → invoice)', async () => {
      assert.equal((await titles(company, 'how often should I be descaling?'))[0], 'Descaling');
      assert.equal((await titles(company, 'where are my invoices'))[0], 'Invoices');
    });

    it('corrects a misspelt word to the company’s nearest word, and not to another company’s', async () => {
      assert.equal((await titles(company, 'how long is the waranty?'))[0], 'Warranty');
      assert.equal((await titles(company, 'dowload an invoce'))[0], 'Invoices');
      // "limescale" is only this company's word: the other company's search neither corrects to it nor finds it.
      await add(other, 'Kettles', '# Kettles\n\nOur kettles boil water quickly.');
      assert.deepEqual(await titles(other, 'limescal'), []);
      assert.deepEqual(await titles(other, 'warranty'), []);
      assert.deepEqual(await titles(company, 'kettles'), []);
    });

    it('never returns a deleted source, and forgets its words', async () => {
      const source = await add(
        company,
        'Gift wrapping',
        '# Gift wrapping\n\nWe wrap presents in recycled paper.',
      );
      assert.equal((await titles(company, 'gift wrapping'))[0], 'Gift wrapping');
      await server.ctx.knowledge.delete(company, source.id, ACTOR);
      assert.deepEqual(await titles(company, 'gift wrapping'), []);
      // The vocabulary no longer holds the deleted words, so "wraping" is not corrected to "wrapping".
      const vocabulary = await server.ctx.store.db
        .selectFrom('knowledge_terms')
        .select('term')
        .where('company_id', '=', company)
        .where('term', 'in', ['wrapping', 'presents', 'warranty'])
        .execute();
      assert.deepEqual(
        vocabulary.map((r) => r.term),
        ['warranty'],
      );
    });

    it('re-indexing replaces the words of the old version', async () => {
      const source = await add(company, 'Opening hours', '# Opening hours\n\nOpen Monday to Friday.');
      await server.ctx.knowledge.update(
        company,
        source.id,
        {
          kind: 'text',
          title: 'Opening hours',
          content: '# Opening hours\n\nOpen every weekday and Saturday.',
        },
        ACTOR,
      );
      assert.deepEqual(await titles(company, 'monday'), []);
      assert.equal((await titles(company, 'saturday'))[0], 'Opening hours');
    });

    it('finds a passage by a built-in synonym, a phrase or the other spelling of a word', async () => {
      const shop = (await server.ctx.companies.create('Synonyms')).id;
      await add(shop, 'Parcels', '# Parcels\n\nWe can leave a parcel with your neighbour when you are out.');
      await add(shop, 'Accounts', '# Accounts\n\nRegister with your email address to create an account.');
      await add(shop, 'Invoices', INVOICES);
      assert.equal((await titles(shop, 'where is my receipt'))[0], 'Invoices');
      assert.equal((await titles(shop, 'leave the package with a neighbor'))[0], 'Parcels');
      assert.equal((await titles(shop, 'how do I sign up'))[0], 'Accounts');
      // Every word of the question found through its synonym counts as found: the answer is not refused.
      const [best] = await server.ctx.knowledge.search(shop, 'receipt download', { limit: 1 });
      assert.ok(best && best.score >= server.ctx.knowledge.relevanceThreshold, String(best?.score));
    });

    it('a word most sources hold does not widen the match, yet still counts when ranking', async () => {
      const crowd = (await server.ctx.companies.create('Crowd')).id;
      // More sources than COMMON_MIN_SOURCES all say "coffee"; one also says "decaf".
      for (let i = 0; i <= COMMON_MIN_SOURCES; i++)
        await add(crowd, `Lot ${i}`, `# Lot ${i}\n\nA washed coffee from farm ${i}.`);
      await add(crowd, 'Decaf', '# Decaf\n\nOur decaf coffee is decaffeinated with water.');
      const found = await server.ctx.knowledge.search(crowd, 'is your decaf coffee made with water', {
        limit: 5,
      });
      assert.equal(found[0]?.title, 'Decaf');
      // The common word alone still finds passages (a question of common words uses them all).
      assert.ok((await titles(crowd, 'coffee')).length > 0);
    });

    it('a question of common words alone matches the passages holding all of them, any of them only when none does', async () => {
      const lots = (await server.ctx.companies.create('Lots')).id;
      // "washed" and "natural" are each held by more than COMMON_MIN_SOURCES sources, both by one.
      for (let i = 0; i <= COMMON_MIN_SOURCES; i++) {
        await add(lots, `Washed ${i}`, `# Washed ${i}\n\nA washed lot from farm ${i}.`);
        await add(lots, `Natural ${i}`, `# Natural ${i}\n\nA natural lot from estate ${i}.`);
      }
      await add(lots, 'Both', '# Both\n\nHalf washed, half natural.');
      assert.deepEqual(await titles(lots, 'washed natural'), ['Both']);
      // No passage holds "washed", "natural" and "estate": the passages holding any of them are ranked instead.
      assert.equal((await titles(lots, 'washed natural estate')).length, 5);
    });

    it('ranks the passage holding the question’s words side by side above one holding them apart', async () => {
      const near = (await server.ctx.companies.create('Proximity')).id;
      // The same words; the second passage is a word shorter, so both engines rank it first on their own.
      await add(near, 'Recipe one', '# Recipe one\n\nPull a double shot with the big basket.');
      await add(near, 'Recipe two', '# Recipe two\n\nPull a shot with the double basket.');
      assert.equal((await titles(near, 'double shot'))[0], 'Recipe one');
    });

    it('counts a word of the same family in coverage (delivered → delivery)', async () => {
      const family = (await server.ctx.companies.create('Word families')).id;
      // Neither stemmer makes "delivered" and "delivery" one word; the shorter passages hold one word of the question
      // each, as it is written, so the engines rank them first on their own. ("delivered" is the company's word, so
      // it is not taken for a typo of "delivery" either.)
      await add(
        family,
        'Carrier options',
        '# Carrier options\n\nAsk for delivery to a neighbour on the carrier page.',
      );
      await add(family, 'Bakery', '# Bakery\n\nA neighbour sells our beans.');
      await add(family, 'Beans', '# Beans\n\nBeans are delivered weekly.');
      assert.equal((await titles(family, 'was it delivered to a neighbour?'))[0], 'Carrier options');
    });

    it('finds a unit by its abbreviation (grams → g)', async () => {
      const units = (await server.ctx.companies.create('Units')).id;
      await add(units, 'Espresso recipe', '# Espresso recipe\n\nUse 18 g of ground coffee in the basket.');
      await add(units, 'Origins', '# Origins\n\nCoffee from Kenya.');
      assert.equal((await titles(units, 'how many grams of coffee?'))[0], 'Espresso recipe');
    });
  });
}
