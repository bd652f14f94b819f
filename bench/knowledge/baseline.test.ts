import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  BASELINE_THRESHOLD,
  Bm25Index,
  createBaselinePeer,
  htmlToText,
  passagesOf,
  tokenize,
} from './baseline.ts';
import type { Article } from './data.ts';

const article = (
  id: string,
  content: string,
  contentType: Article['contentType'] = 'text/markdown',
): Article => ({
  id,
  title: `Title of ${id}`,
  contentType,
  url: `https://help.example/${id}`,
  content,
});

describe('baseline text handling', () => {
  test('tokens are lower case with accents folded and stop words dropped', () => {
    assert.deepEqual(tokenize('How do I descale the Café machine? E3!'), [
      'descale',
      'cafe',
      'machine',
      'e3',
    ]);
    assert.deepEqual(tokenize("I don't know"), ['don', 'know']);
    assert.deepEqual(tokenize('   '), []);
  });

  test('HTML becomes text with its headings as # lines and its entities decoded', () => {
    const text = htmlToText(
      '<html><head><title>x</title></head><body><h1>Guide</h1><p>Salt &amp; pepper</p>' +
        '<h2>Error <em>codes</em></h2><ul><li>E1</li></ul></body></html>',
    );
    assert.equal(text, '# Guide\n\nSalt & pepper\n\n## Error codes\n\nE1');
  });

  test('markdown and HTML are cut at headings, plain text at blank lines, each passage titled', () => {
    assert.deepEqual(
      passagesOf(article('md', '# Top\n\nIntro.\n\n## One\n\nFirst.\n\n## Empty\n\n## Two\nSecond.')),
      ['Title of md\nTop\nIntro.', 'Title of md\nOne\nFirst.', 'Title of md\nTwo\nSecond.'],
    );
    assert.deepEqual(passagesOf(article('h', '<h1>A</h1><p>x</p><h2>B</h2><p>y</p>', 'text/html')), [
      'Title of h\nA\nx',
      'Title of h\nB\ny',
    ]);
    assert.deepEqual(passagesOf(article('t', 'Line one\nline two\n\n\nNext part', 'text/plain')), [
      'Title of t\nLine one\nline two',
      'Title of t\nNext part',
    ]);
  });

  test('a heading inside a code fence does not cut the passage', () => {
    assert.equal(passagesOf(article('c', '## Code\n\n```\n# not a heading\n```\n')).length, 1);
  });
});

describe('baseline BM25', () => {
  const index = new Bm25Index();
  index.add('returns', 'You can return equipment within 30 days of delivery');
  index.add('returns', 'Opened coffee cannot be returned');
  index.add('shipping', 'Delivery takes 1 to 3 working days; express delivery is next day');
  index.add('warranty', 'The Aria espresso machine has a 3 year warranty when registered');

  test('the passage with the rarer matching terms ranks first, and scores are normalised below 1', () => {
    const results = index.search('express delivery', 10);
    assert.equal(results[0]!.sourceId, 'shipping');
    assert.equal(results[1]!.sourceId, 'returns');
    for (const r of results) assert.ok(r.score > 0 && r.score < 1, `score ${r.score}`);
    assert.ok(results[0]!.score > results[1]!.score);
  });

  test('a query of words the index never saw returns nothing; half-unknown queries score lower', () => {
    assert.deepEqual(index.search('hello there', 5), []);
    const known = index.search('warranty', 1)[0]!.score;
    const halfKnown = index.search('warranty zebra', 1)[0]!.score;
    assert.ok(halfKnown < known / 1.5, `${halfKnown} vs ${known}`);
  });

  test('at most limit passages, one source may appear more than once', () => {
    const results = index.search('return delivery coffee', 2);
    assert.equal(results.length, 2);
    assert.equal(index.search('returned return', 10).filter((r) => r.sourceId === 'returns').length, 2);
  });

  test('a single full match of every query term scores about 1 / (k1 + 1), above the threshold', () => {
    const score = index.search('aria warranty', 1)[0]!.score;
    assert.ok(score > BASELINE_THRESHOLD && score < 0.6, `score ${score}`);
  });
});

describe('baseline peer', () => {
  test('companies are searched apart, and each added article reports its passages', async () => {
    const peer = createBaselinePeer();
    const a = await peer.add(
      'c1',
      article('descaling', '# Descaling\n\nUse citric acid.\n\n## Vinegar\n\nNever.'),
    );
    await peer.add('c2', article('other', 'Citric acid is sour.', 'text/plain'));
    assert.equal(a.chunks, 2);
    const results = await peer.search('c1', 'citric acid', 5);
    assert.deepEqual(
      results.map((r) => r.sourceId),
      [a.sourceId],
    );
    assert.deepEqual(await peer.search('unknown company', 'citric acid', 5), []);
    await peer.close();
    assert.deepEqual(await peer.search('c1', 'citric acid', 5), []);
  });
});
