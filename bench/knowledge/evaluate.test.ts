import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createBaselinePeer } from './baseline.ts';
import type { Article, Question } from './data.ts';
import { askAll, fillTo, indexArticles, SEARCH_LIMIT, type SourceMap, timeSearches } from './evaluate.ts';
import type { KnowledgePeer } from './peer.ts';

const article = (id: string, content: string): Article => ({
  id,
  title: id,
  contentType: 'text/markdown',
  url: `https://help.example/${id}`,
  content,
});

/** The baseline peer with every search's limit recorded. */
function recording(): { peer: KnowledgePeer; limits: number[] } {
  const inner = createBaselinePeer();
  const limits: number[] = [];
  return {
    limits,
    peer: {
      ...inner,
      search: (company, query, limit) => {
        limits.push(limit);
        return inner.search(company, query, limit);
      },
    },
  };
}

describe('the bench steps', () => {
  test('answers map the peer’s source ids back to article ids, with the best score', async () => {
    const { peer, limits } = recording();
    const sources: SourceMap = new Map();
    const indexed = await indexArticles(
      peer,
      'c',
      [
        article('descaling', '# Descale\n\nUse citric acid.\n\n## Vinegar\n\nNever vinegar.'),
        article('other', 'Acid.'),
      ],
      sources,
    );
    assert.deepEqual([indexed.articles, indexed.chunks], [2, 3]);
    const question: Question = {
      id: 'q1',
      query: 'citric acid',
      scope: 'in',
      style: 'keywords',
      expected: ['descaling'],
    };
    const silence: Question = { id: 'q2', query: 'hello', scope: 'out', style: 'small-talk', expected: [] };
    const [found, none] = await askAll(peer, 'c', [question, silence], sources);
    assert.deepEqual(found!.articles.slice(0, 2), ['descaling', 'other']);
    assert.equal(found!.topScore, (await peer.search('c', 'citric acid', 1))[0]!.score);
    assert.deepEqual([none!.articles, none!.topScore], [[], undefined]);
    assert.deepEqual(limits.slice(0, 2), [SEARCH_LIMIT, SEARCH_LIMIT]);
  });

  test('filling stops at the first article that reaches the target, and says so when the filler runs out', async () => {
    const { peer } = recording();
    const sources: SourceMap = new Map();
    const filler = [1, 2, 3, 4, 5].map((n) => article(`f${n}`, '# A\n\nx\n\n## B\n\ny'))[Symbol.iterator]();
    const filled = await fillTo(peer, 'c', filler, 1, 6, sources);
    assert.deepEqual([filled.articles, filled.chunks], [3, 6]);
    assert.deepEqual([...sources.values()], ['f1', 'f2', 'f3']);
    await assert.rejects(fillTo(peer, 'c', filler, 7, 100, sources), /ran out at 11 passages/);
  });

  test('timing runs one untimed pass, then one sample per query and round', async () => {
    const { peer, limits } = recording();
    await peer.add('c', article('a', 'citric acid'));
    const samples = await timeSearches(peer, 'c', ['citric', 'acid', 'hello'], 4);
    assert.equal(samples.length, 12);
    assert.equal(limits.length, 15);
    assert.ok(samples.every((s) => s >= 0 && Number.isFinite(s)));
  });
});
