import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { htmlToText } from './baseline.ts';
import { type Article, type Question, readCorpus, readQuestions } from './data.ts';

const corpusDir = join(import.meta.dirname, 'corpus');
const articles = readCorpus();
const questions = readQuestions(articles);
const byId = new Map(articles.map((a) => [a.id, a]));

/** The headings of an article as written (markdown `#` lines, HTML `<h1>`–`<h6>`); plain text has none. */
function headings(article: Article): string[] {
  if (article.contentType === 'text/plain') return [];
  const text = article.contentType === 'text/html' ? htmlToText(article.content) : article.content;
  return [...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => m[1]!.trim());
}

describe('the help centre', () => {
  test('40 to 60 articles in all three formats, each with a title, a unique URL and real text', () => {
    assert.ok(articles.length >= 40 && articles.length <= 60, `${articles.length} articles`);
    for (const type of ['text/markdown', 'text/html', 'text/plain'] as const)
      assert.ok(articles.filter((a) => a.contentType === type).length >= 3, `too few ${type}`);
    assert.equal(new Set(articles.map((a) => a.url)).size, articles.length);
    for (const a of articles) {
      assert.ok(a.title.length > 5, a.id);
      assert.ok((a.content.match(/\S+/g)?.length ?? 0) >= 80, `${a.id} is too short`);
    }
  });

  test('some pages are long and answer in one of several sections', () => {
    const long = articles.filter((a) => headings(a).length >= 8 && a.content.length > 3_000);
    assert.ok(long.length >= 4, `${long.map((a) => a.id)}`);
  });

  test('the data stays small (a few hundred KB)', () => {
    const files = [join(import.meta.dirname, 'questions.json'), join(corpusDir, 'articles.json')];
    const bytes =
      files.reduce((n, f) => n + statSync(f).size, 0) + articles.reduce((n, a) => n + a.content.length, 0);
    assert.ok(bytes < 300_000, `${bytes} bytes`);
  });
});

describe('the question set', () => {
  const inScope = questions.filter((q) => q.scope === 'in');
  const outOfScope = questions.filter((q) => q.scope === 'out');

  test('about 200 or more answerable questions and about 40 out-of-scope ones of every kind', () => {
    assert.ok(inScope.length >= 200, `${inScope.length}`);
    assert.ok(outOfScope.length >= 35 && outOfScope.length <= 50, `${outOfScope.length}`);
    for (const kind of ['near-domain', 'small-talk', 'unrelated'])
      assert.ok(outOfScope.filter((q) => q.style === kind).length >= 8, kind);
    for (const style of ['paraphrase', 'keywords', 'typo', 'long', 'two-topics'])
      assert.ok(inScope.filter((q) => q.style === style).length >= 15, style);
  });

  test('every article answers at least one question', () => {
    const expected = new Set(inScope.flatMap((q) => q.expected));
    assert.deepEqual(
      articles.filter((a) => !expected.has(a.id)).map((a) => a.id),
      [],
    );
  });

  test('a named section is a heading of the first expected article', () => {
    for (const q of inScope) {
      if (q.scope !== 'in' || q.section === undefined) continue;
      assert.ok(headings(byId.get(q.expected[0]!)!).includes(q.section), `${q.id}: "${q.section}"`);
    }
    assert.ok(inScope.filter((q) => q.scope === 'in' && q.section !== undefined).length >= 150);
  });

  test('no query is asked twice', () => {
    const normalised = questions.map((q) => q.query.toLowerCase().trim());
    assert.equal(new Set(normalised).size, normalised.length);
  });
});

describe('reading the question set refuses malformed entries', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knowledge-questions-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const valid = JSON.parse(readFileSync(join(import.meta.dirname, 'questions.json'), 'utf8')) as {
    questions: Question[];
  };
  const cases: Array<[string, (q: Question[]) => void, RegExp]> = [
    ['a duplicate id', (q) => q.push({ ...q[0]! }), /appears twice/],
    [
      'an unknown article',
      (q) => (q[0]!.expected as string[]).push('no-such-article'),
      /expects no-such-article/,
    ],
    ['an in-scope question expecting nothing', (q) => (q[0]!.expected = []), /expects no article/],
    [
      'an out-of-scope question expecting an article',
      (q) => (q.at(-1)!.expected as string[]).push('refunds'),
      /out of scope/,
    ],
    ['an unknown style', (q) => ((q[0] as { style: string }).style = 'poetry'), /has style poetry/],
    [
      'a two-topic question whose topics do not cover its articles',
      (q) => {
        const two = q.find((x) => x.scope === 'in' && x.style === 'two-topics') as { topics: string[][] };
        two.topics = [two.topics[0]!, two.topics[0]!];
      },
      /union of its topics/,
    ],
  ];
  for (const [what, spoil, error] of cases) {
    test(what, () => {
      const copy = structuredClone(valid);
      spoil(copy.questions);
      const file = join(dir, `${what.replace(/\W+/g, '-')}.json`);
      writeFileSync(file, JSON.stringify(copy));
      assert.throws(() => readQuestions(articles, file), error);
    });
  }
});
