import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Question } from './data.ts';
import {
  type Answer,
  distinctInOrder,
  foundAtK,
  isRefused,
  latencySummary,
  recallAtK,
  recallByStyle,
  refusalSweep,
  refusals,
  scoreQuantiles,
  topicRecallAtK,
  topicsFoundAtK,
} from './metrics.ts';

let counter = 0;
const ask = (expected: string[], style: 'paraphrase' | 'typo' = 'paraphrase'): Question => ({
  id: `q${++counter}`,
  query: 'a question',
  scope: 'in',
  style,
  expected,
});
const outOfScope = (): Question => ({
  id: `q${++counter}`,
  query: 'hello',
  scope: 'out',
  style: 'small-talk',
  expected: [],
});
const answer = (question: Question, articles: string[], topScore?: number): Answer => ({
  question,
  articles,
  topScore: topScore ?? (articles.length > 0 ? 1 : undefined),
});

describe('found at k', () => {
  test('counts distinct sources: passages of one article do not push the next article out of the top k', () => {
    const ranking = ['returns', 'returns', 'returns', 'refunds'];
    assert.equal(foundAtK(['refunds'], ranking, 2), true);
    assert.equal(foundAtK(['refunds'], ranking, 1), false);
    assert.deepEqual(distinctInOrder(ranking), ['returns', 'refunds']);
  });

  test('any expected article counts; nothing found in an empty ranking', () => {
    assert.equal(foundAtK(['a', 'b'], ['x', 'b', 'a'], 2), true);
    assert.equal(foundAtK(['a', 'b'], ['x', 'y', 'z', 'a'], 3), false);
    assert.equal(foundAtK(['a'], [], 3), false);
  });

  test('a two-topic question is covered only when each topic has an article in the top k', () => {
    const topics = [['shipping'], ['payments', 'klarna']];
    assert.equal(topicsFoundAtK(topics, ['shipping', 'other', 'klarna'], 3), true);
    assert.equal(topicsFoundAtK(topics, ['shipping', 'shipping', 'other'], 3), false);
    assert.equal(topicsFoundAtK(topics, ['shipping', 'other', 'klarna'], 2), false);
    assert.equal(topicsFoundAtK([], ['shipping'], 3), false);
  });
});

describe('recall', () => {
  test('recall@k is the share of in-scope questions found, out-of-scope ones left out', () => {
    const answers = [
      answer(ask(['a']), ['a', 'b']),
      answer(ask(['a']), ['b', 'c', 'a']),
      answer(ask(['a']), ['b', 'c', 'd', 'a']),
      answer(ask(['a']), []),
      answer(outOfScope(), ['a']),
    ];
    assert.equal(recallAtK(answers, 1), 1 / 4);
    assert.equal(recallAtK(answers, 3), 2 / 4);
    assert.equal(recallAtK(answers, 10), 3 / 4);
  });

  test('recall of no in-scope question is not a number, not a perfect score', () => {
    assert.ok(Number.isNaN(recallAtK([answer(outOfScope(), [])], 3)));
  });

  test('both@k counts only two-topic questions', () => {
    const twoTopics = (articles: string[]): Answer =>
      answer({ ...ask(['a', 'b']), style: 'two-topics', topics: [['a'], ['b']] } as Question, articles);
    const answers = [twoTopics(['a', 'b']), twoTopics(['a', 'x', 'y', 'b']), answer(ask(['a', 'b']), ['a'])];
    assert.equal(topicRecallAtK(answers, 3), 1 / 2);
  });

  test('recall by style groups the in-scope questions by their style', () => {
    const answers = [
      answer(ask(['a'], 'typo'), ['a']),
      answer(ask(['a'], 'typo'), ['b']),
      answer(ask(['a']), ['a']),
      answer(outOfScope(), []),
    ];
    assert.deepEqual(recallByStyle(answers, 3), [
      { style: 'typo', questions: 2, recall: 0.5 },
      { style: 'paraphrase', questions: 1, recall: 1 },
    ]);
  });
});

describe('refusals', () => {
  test('a question is refused when nothing came back or its best score is below the threshold', () => {
    assert.equal(isRefused(undefined, 0), true);
    assert.equal(isRefused(Number.NaN, 0), true);
    assert.equal(isRefused(0.19, 0.2), true);
    assert.equal(isRefused(0.2, 0.2), false);
    assert.equal(isRefused(-5, Number.NEGATIVE_INFINITY), false);
  });

  test('out-of-scope refusals and false refusals are shares of their own kind of question', () => {
    const answers = [
      answer(outOfScope(), ['a'], 0.1),
      answer(outOfScope(), [], undefined),
      answer(outOfScope(), ['a'], 0.9),
      answer(outOfScope(), ['a'], 0.3),
      answer(ask(['a']), ['a'], 0.8),
      answer(ask(['a']), ['b'], 0.15),
    ];
    assert.deepEqual(refusals(answers, 0.2), {
      outOfScopeRefused: 2 / 4,
      falseRefusals: 1 / 2,
      outOfScope: 4,
      inScope: 2,
    });
  });

  test('a higher threshold refuses more of both kinds', () => {
    const answers = [
      answer(outOfScope(), ['a'], 0.1),
      answer(outOfScope(), ['a'], 0.5),
      answer(ask(['a']), ['a'], 0.3),
      answer(ask(['a']), ['a'], 0.9),
    ];
    const rows = refusalSweep(answers, [0, 0.2, 0.4, 1]);
    assert.deepEqual(
      rows.map((r) => [r.threshold, r.outOfScopeRefused, r.falseRefusals]),
      [
        [0, 0, 0],
        [0.2, 0.5, 0],
        [0.4, 0.5, 0.5],
        [1, 1, 1],
      ],
    );
  });

  test('score quantiles are read from the answers that had results', () => {
    const answers = [10, 20, 30, 40].map((s) => answer(ask(['a']), ['a'], s));
    answers.push(answer(ask(['a']), [], undefined));
    assert.deepEqual(scoreQuantiles(answers, [0.25, 0.5, 1]), [10, 20, 40]);
  });
});

describe('latency', () => {
  test('nearest-rank p50 and p99 and the maximum of the samples', () => {
    const samples = Array.from({ length: 200 }, (_, i) => 200 - i); // 200 … 1, unsorted on purpose
    assert.deepEqual(latencySummary(samples), { samples: 200, p50: 100, p99: 198, max: 200 });
  });

  test('no samples give zeros', () => {
    assert.deepEqual(latencySummary([]), { samples: 0, p50: 0, p99: 0, max: 0 });
  });
});
