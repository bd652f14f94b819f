import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { passagesOf, tokenize } from './baseline.ts';
import { readCorpus, readQuestions } from './data.ts';
import { catalogueQueries, isReserved, mulberry32, SCALE_SEED, scaleArticles } from './scale.ts';

const take = <T>(items: Iterator<T>, count: number): T[] =>
  Array.from({ length: count }, () => {
    const next = items.next();
    assert.equal(next.done, false);
    return next.value as T;
  });

describe('filler for the latency figures', () => {
  test('the PRNG is deterministic, uniform enough and seed-dependent', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const values = Array.from({ length: 10_000 }, () => a());
    assert.deepEqual(
      values.slice(0, 5),
      Array.from({ length: 5 }, () => b()),
    );
    assert.ok(values.every((v) => v >= 0 && v < 1));
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    assert.ok(Math.abs(mean - 0.5) < 0.02, `mean ${mean}`);
    assert.notEqual(mulberry32(43)(), mulberry32(42)());
  });

  test('the same seed gives the same articles, another seed others', () => {
    const first = take(scaleArticles(), 30);
    assert.deepEqual(take(scaleArticles(SCALE_SEED), 30), first);
    assert.notDeepEqual(take(scaleArticles(SCALE_SEED + 7), 30), first);
    assert.equal(new Set(first.map((a) => a.id)).size, 30);
  });

  // The filler, the baseline's passages and every reserved word are checked over one full 10,000-passage stretch.
  const articles = [];
  let passages = 0;
  for (const article of scaleArticles()) {
    articles.push(article);
    passages += passagesOf(article).length;
    if (passages >= 10_000) break;
  }
  const words = new Set(articles.flatMap((a) => tokenize(`${a.title}\n${a.content}`)));

  test('10,000 passages take fewer than 2,000 articles with a rich vocabulary', () => {
    assert.ok(articles.length < 2_000, `${articles.length} articles`);
    assert.ok(words.size > 5_000, `${words.size} distinct words`);
  });

  test('the filler uses no reserved word: it never answers a question about the help centre', () => {
    assert.deepEqual(
      [...words].filter((w) => isReserved(w)),
      [],
    );
  });

  test('the filler shares no word with an out-of-scope question: it never gives one something to match', () => {
    const questions = readQuestions(readCorpus()).filter((q) => q.scope === 'out');
    const shared = questions.flatMap((q) =>
      tokenize(q.query)
        .filter((w) => words.has(w))
        .map((w) => `${q.id} ${w}`),
    );
    assert.deepEqual(shared, []);
  });

  test('the reserved list catches what it is meant to', () => {
    assert.equal(isReserved('Refunds'), true);
    assert.equal(isReserved('tea'), true);
    assert.equal(isReserved('teak'), false);
    assert.equal(isReserved('bergamot'), false);
  });

  test('catalogue queries are deterministic and made of the filler’s own words', () => {
    const queries = catalogueQueries(200);
    assert.deepEqual(catalogueQueries(200), queries);
    const unknown = queries.flatMap((q) => tokenize(q)).filter((w) => !words.has(w));
    assert.deepEqual(unknown, []);
  });
});
