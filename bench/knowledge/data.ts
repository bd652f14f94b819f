// The retrieval evaluation's data (README.md beside this file says how it was made): the help centre of a fictional
// coffee roaster in corpus/ (corpus/articles.json lists each article once) and the question set in questions.json.
// Read and checked here, so a malformed entry stops the bench instead of skewing its figures.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type ContentType = 'text/markdown' | 'text/html' | 'text/plain';

/** One help-centre article: what the knowledge API's `POST /platform/v1/knowledge/sources` takes, plus our id. */
export interface Article {
  /** Our name for the article; questions name the articles that answer them by it. */
  id: string;
  title: string;
  contentType: ContentType;
  url: string;
  content: string;
}

export const IN_SCOPE_STYLES = ['paraphrase', 'keywords', 'typo', 'long', 'verbatim', 'two-topics'] as const;
export const OUT_OF_SCOPE_KINDS = ['near-domain', 'small-talk', 'unrelated'] as const;
export type InScopeStyle = (typeof IN_SCOPE_STYLES)[number];
export type OutOfScopeKind = (typeof OUT_OF_SCOPE_KINDS)[number];

/**
 * A question a visitor might type. In scope: `expected` names every article that answers it (any of them counts as
 * found) and `section` the heading of the part of the first one that does, when it has headings; a two-topic
 * question lists in `topics` the articles that answer each of its topics (`expected` is their union). Out of scope:
 * no article answers it, `expected` is empty, and the right outcome is a refusal.
 */
export type Question =
  | {
      id: string;
      query: string;
      scope: 'in';
      style: InScopeStyle;
      expected: string[];
      section?: string;
      topics?: string[][];
    }
  | { id: string; query: string; scope: 'out'; style: OutOfScopeKind; expected: [] };

const here = import.meta.dirname;
const CONTENT_TYPES: readonly ContentType[] = ['text/markdown', 'text/html', 'text/plain'];

interface ArticleEntry {
  id: string;
  title: string;
  file: string;
  content_type: ContentType;
  url: string;
}

/** The articles of corpus/, in the order corpus/articles.json lists them. */
export function readCorpus(dir = join(here, 'corpus')): Article[] {
  const manifest = JSON.parse(readFileSync(join(dir, 'articles.json'), 'utf8')) as {
    articles: ArticleEntry[];
  };
  const seen = new Set<string>();
  return manifest.articles.map((entry) => {
    if (seen.has(entry.id)) throw new Error(`corpus: article ${entry.id} is listed twice`);
    seen.add(entry.id);
    if (!CONTENT_TYPES.includes(entry.content_type))
      throw new Error(`corpus: article ${entry.id} has content type ${entry.content_type}`);
    const content = readFileSync(join(dir, entry.file), 'utf8');
    return { id: entry.id, title: entry.title, contentType: entry.content_type, url: entry.url, content };
  });
}

/**
 * The help centre's company synonyms (corpus/synonyms.json, README.md "Company synonyms"): the body of a
 * `PUT /platform/v1/knowledge/synonyms`, checked by the service when the bench gives it to a company.
 */
export function readSynonyms(dir = join(here, 'corpus')): unknown {
  return JSON.parse(readFileSync(join(dir, 'synonyms.json'), 'utf8'));
}

/** The question set, checked against the corpus: every expected article exists, ids are unique. */
export function readQuestions(articles: readonly Article[], file = join(here, 'questions.json')): Question[] {
  const { questions } = JSON.parse(readFileSync(file, 'utf8')) as { questions: Question[] };
  const known = new Set(articles.map((a) => a.id));
  const ids = new Set<string>();
  for (const q of questions) {
    if (ids.has(q.id)) throw new Error(`questions: ${q.id} appears twice`);
    ids.add(q.id);
    if (q.query.trim() === '') throw new Error(`questions: ${q.id} has no query`);
    if (q.scope === 'in') {
      if (!IN_SCOPE_STYLES.includes(q.style)) throw new Error(`questions: ${q.id} has style ${q.style}`);
      if (q.expected.length === 0) throw new Error(`questions: ${q.id} is in scope but expects no article`);
      for (const id of q.expected) if (!known.has(id)) throw new Error(`questions: ${q.id} expects ${id}`);
      checkTopics(q);
    } else if (q.scope === 'out') {
      if (!OUT_OF_SCOPE_KINDS.includes(q.style)) throw new Error(`questions: ${q.id} has kind ${q.style}`);
      if (q.expected.length !== 0) throw new Error(`questions: ${q.id} is out of scope but expects articles`);
    } else {
      throw new Error(`questions: ${(q as Question).id} has no scope`);
    }
  }
  return questions;
}

/** A two-topic question names two or more topics, each answered by some of its expected articles, and no others. */
function checkTopics(q: Extract<Question, { scope: 'in' }>): void {
  if (q.style !== 'two-topics') {
    if (q.topics !== undefined)
      throw new Error(`questions: ${q.id} has topics but is not a two-topic question`);
    return;
  }
  if (q.topics === undefined || q.topics.length < 2 || q.topics.some((t) => t.length === 0))
    throw new Error(`questions: ${q.id} is a two-topic question without two topics`);
  const union = new Set(q.topics.flat());
  if (union.size !== q.expected.length || q.expected.some((id) => !union.has(id)))
    throw new Error(`questions: ${q.id}'s expected articles are not the union of its topics`);
}
