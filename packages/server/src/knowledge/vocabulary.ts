import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';
import { builtInSynonyms } from './lexicon.ts';
import { fold, isStopWord, type QueryTerm, wordsOf } from './ranking.ts';
import { type AskedItem, askedItems } from './synonyms.ts';

/**
 * Each company's vocabulary, `knowledge_terms`: every word of its passages with the number of its sources that hold
 * it, kept in step with the passages in the same transaction. A search reads it for two things
 * (docs/knowledge.md "Misspelt words" and "Ranking"):
 *
 * - Typo tolerance. A question word the vocabulary lacks is searched by its own spelling and by the company's word at
 *   the smallest edit distance (optimal string alignment: insertions, deletions, substitutions and swaps of
 *   neighbours), at most 1 for words of 4–8 letters and 2 for longer ones, the word held by most sources winning a
 *   tie (then the word first in code-point order). Candidates share the first letter and lie within the allowed
 *   edits of the word's length (both read through one index, for every word in one statement).
 * - Common words. A word held by more than COMMON_SHARE of the company's sources (and more than COMMON_MIN_SOURCES)
 *   matches so many passages that ranking all of them costs more than it tells; like Lucene's common-terms query,
 *   the wide (OR) match uses the question's other words, and the common ones count only when rescoring.
 *
 * Only the company's own vocabulary is read: another company's words never shape a search.
 */

export const COMMON_SHARE = 0.05;
export const COMMON_MIN_SOURCES = 50;

/** Words shorter than this are never corrected: too many real words lie one edit apart. */
const MIN_CORRECTED_LENGTH = 4;

/** The distinct words of passages, as the vocabulary stores them. */
export function vocabularyOf(passages: ReadonlyArray<{ title: string; body: string }>): string[] {
  const words = new Set<string>();
  for (const p of passages) for (const w of wordsOf(`${p.title} ${p.body}`)) words.add(w);
  // Sorted, so concurrent writers lock the same rows in the same order (no deadlock on PostgreSQL).
  return [...words].sort();
}

/**
 * The words as one list parameter the store expands into rows: a JSON array read by SQLite's `json_each`, a text
 * array by PostgreSQL's `unnest`. One statement per source instead of one bound parameter per word and column keeps
 * vocabulary upkeep a small part of indexing (bench/knowledge/README.md "The figures", passages/s).
 */
const wordRows = (dialect: Dialect, words: readonly string[]) =>
  dialect === 'postgres'
    ? sql`select t as term from unnest(${[...words]}::text[]) as t`
    : sql`select value as term from json_each(${JSON.stringify(words)})`;

/** Adds one source's words to the company's vocabulary (inside the caller's transaction). */
export async function addToVocabulary(
  trx: Kysely<Database>,
  dialect: Dialect,
  companyId: string,
  words: readonly string[],
): Promise<void> {
  if (words.length === 0) return;
  // `where true` lets SQLite parse the upsert after a select (SQLite "The UPSERT clause", parsing ambiguity).
  await sql`
    insert into knowledge_terms (company_id, term, initial, sources)
    select ${companyId}, w.term, substr(w.term, 1, 1), 1 from (${wordRows(dialect, words)}) w where true
    on conflict (company_id, term) do update set sources = knowledge_terms.sources + 1`.execute(trx);
}

/** Takes one source's words out of the company's vocabulary; a word no source holds any more is removed. */
export async function removeFromVocabulary(
  trx: Kysely<Database>,
  dialect: Dialect,
  companyId: string,
  words: readonly string[],
): Promise<void> {
  if (words.length === 0) return;
  const listed = sql`term in (select w.term from (${wordRows(dialect, words)}) w)`;
  await sql`update knowledge_terms set sources = sources - 1 where company_id = ${companyId} and ${listed}`.execute(
    trx,
  );
  await sql`delete from knowledge_terms where company_id = ${companyId} and sources <= 0 and ${listed}`.execute(
    trx,
  );
}

/** The question's words as searched: each with its spellings and weight, and whether the company holds it commonly. */
export interface LookedUp {
  terms: QueryTerm[];
  /**
   * Each term's weight in coverage (packages/server/src/knowledge/ranking.ts), its inverse document frequency over
   * the company's sources: a word few articles use ("invoice") tells more about what is asked than one most use
   * ("order"). A word no source holds weighs as one held by a single source.
   */
  weights: number[];
  /** Per term, how many of its first spellings are the word itself or its correction (the rest are synonyms). */
  exact: number[];
  /** The terms that are not common (see the top of this file), for the wide match. */
  rare: QueryTerm[];
}

/**
 * Each question word with its spellings (itself, the nearest company word when it is unknown, and its built-in
 * synonyms, packages/server/src/knowledge/lexicon.ts), its weight, rare or not. One statement reads everything the
 * vocabulary holds for the question (vocabularyRows): each trip through the pool is also an event-loop turn, and a
 * search that read the typo candidates of each unknown word in turn cost one more trip per misspelt word. `text` is
 * the question after the built-in phrases, where the company's synonym terms are found (synonyms.ts `askedItems`).
 */
export async function lookUp(
  db: Kysely<Database>,
  dialect: Dialect,
  companyId: string,
  words: readonly string[],
  text: string,
): Promise<LookedUp> {
  const synonyms = new Map(words.map((w) => [w, builtInSynonyms(w)]));
  const asked = [...new Set([...words, ...[...synonyms.values()].flat()])];
  const { held, candidates, sourceCount, companySynonyms } = await vocabularyRows(
    db,
    dialect,
    companyId,
    asked,
    words.filter(correctable),
  );
  const common = Math.max(COMMON_MIN_SOURCES, COMMON_SHARE * sourceCount);
  const weightOf = (frequency: number) =>
    Math.sqrt(Math.log(1 + (sourceCount + 1) / (Math.max(1, frequency) + 1)));
  const looked: LookedUp = { terms: [], weights: [], exact: [], rare: [] };
  // Without company synonyms the items are the words themselves (askedItems gives queryTerms' words then).
  const items: AskedItem[] =
    companySynonyms !== null
      ? askedItems(text, companyId, companySynonyms)
      : words.map((word) => ({ word, mates: [] }));
  for (const { word, mates, matched } of items) {
    const sources = held.get(word);
    // A word of the company's own synonyms is the company's word: it is not taken for a typo of another. A word of
    // the question inside a company phrase still is, as it would be without the list.
    const near =
      sources === undefined && (mates.length === 0 || matched !== undefined)
        ? nearest(word, candidates.get(word) ?? [])
        : undefined;
    const correction = near?.term;
    if (near) held.set(near.term, near.sources);
    const alike = [
      ...(synonyms.get(word) ?? builtInSynonyms(word)),
      ...(correction ? builtInSynonyms(correction) : []),
      ...mates,
    ];
    // The company phrase the word was found in counts like the word itself: the question said it.
    const own = [word, ...(correction ? [correction] : []), ...(matched ? [matched] : [])];
    const term = [...new Set([...own, ...alike])];
    looked.terms.push(term);
    looked.exact.push(own.length);
    looked.weights.push(weightOf(Math.max(0, ...term.map((w) => held.get(w) ?? 0))));
    if ((sources ?? 0) <= common) looked.rare.push(term);
  }
  return looked;
}

/** Letters only (numbers and codes are not misspelt words) and long enough. */
const correctable = (term: string) => term.length >= MIN_CORRECTED_LENGTH && /^\p{L}+$/u.test(term);

export const maxEdits = (length: number) => (length > 8 ? 2 : 1);

interface VocabularyRow {
  /**
   * `held`: an asked word the company holds; `near`: a typo candidate of `word`; `total`: the ready sources;
   * `synonyms`: the company's own synonym list (its JSON in `term`), when it has one.
   */
  kind: 'held' | 'near' | 'total' | 'synonyms';
  word: string | null;
  term: string | null;
  sources: number | string;
}

/**
 * In one statement: how many sources hold each asked word, the typo candidates of every correctable word the
 * vocabulary lacks (the company's words with its first letter, within the most edits of its length: the exact
 * check is nearest's), the company's ready sources and its own synonym list
 * (packages/server/src/knowledge/synonyms.ts, read here by primary key so that company synonyms cost a search no
 * statement of their own). `cross join` makes SQLite read the words first and the vocabulary by the index on
 * (company, first letter) for each (SQLite "The CROSS JOIN operator"); with a plain join
 * it read the company's whole vocabulary once per word. PostgreSQL plans either the same way.
 */
async function vocabularyRows(
  db: Kysely<Database>,
  dialect: Dialect,
  companyId: string,
  asked: readonly string[],
  correctableWords: readonly string[],
): Promise<{
  held: Map<string, number>;
  candidates: Map<string, VocabularyRow[]>;
  sourceCount: number;
  companySynonyms: string | null;
}> {
  const nearRows =
    correctableWords.length === 0
      ? sql``
      : sql`
    union all
    select 'near', w.term, t.term, t.sources from (${wordRows(dialect, correctableWords)}) w
    cross join knowledge_terms t
    where not exists (select 1 from knowledge_terms k where k.company_id = ${companyId} and k.term = w.term)
      and t.company_id = ${companyId} and t.initial = substr(w.term, 1, 1)
      and length(t.term) between length(w.term) - ${MOST_EDITS} and length(w.term) + ${MOST_EDITS}`;
  const { rows } = await sql<VocabularyRow>`
    select 'total' as kind, null as word, null as term, count(*) as sources from knowledge_sources
    where company_id = ${companyId} and status = 'ready'
    union all
    select 'held', null, term, sources from knowledge_terms
    where company_id = ${companyId} and term in (select w.term from (${wordRows(dialect, asked)}) w)
    union all
    select 'synonyms', null, synonyms, 0 from knowledge_synonyms where company_id = ${companyId}
    ${nearRows}`.execute(db);
  const held = new Map<string, number>();
  const candidates = new Map<string, VocabularyRow[]>();
  let sourceCount = 0;
  let companySynonyms: string | null = null;
  for (const row of rows) {
    if (row.kind === 'total') sourceCount = Number(row.sources);
    else if (row.kind === 'synonyms') companySynonyms = row.term;
    else if (row.kind === 'held') held.set(row.term!, Number(row.sources));
    else candidates.set(row.word!, [...(candidates.get(row.word!) ?? []), row]);
  }
  return { held, candidates, sourceCount, companySynonyms };
}

/** The most edits any word is corrected by (maxEdits of a long word). */
const MOST_EDITS = 2;

function nearest(
  word: string,
  rows: readonly VocabularyRow[],
): { term: string; sources: number } | undefined {
  const limit = maxEdits(word.length);
  let best: { term: string; distance: number; sources: number } | undefined;
  for (const row of rows) {
    const term = row.term!;
    if (Math.abs(term.length - word.length) > limit || isStopWord(term)) continue;
    // A form of the same word (a plural, a past tense) is no typo: the engines' stemmers already match it.
    if (fold(term) === fold(word)) return undefined;
    const distance = editDistance(word, term, limit);
    if (distance > limit) continue;
    const n = Number(row.sources);
    // A full tie goes to the word first in code-point order, not to whichever row the store returned first (the
    // order of an index, or of the table on disk: packages/server/src/storage/migrations/320_knowledge_search_lookups.ts).
    if (
      !best ||
      distance < best.distance ||
      (distance === best.distance && (n > best.sources || (n === best.sources && term < best.term)))
    )
      best = { term, distance, sources: n };
  }
  return best && { term: best.term, sources: best.sources };
}

/**
 * Optimal string alignment distance (Damerau–Levenshtein without repeated edits of one substring), stopping early
 * once every path exceeds `limit` (the result is then limit + 1).
 */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = new Array<number>(b.length + 1);
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return Math.min(previous[b.length]!, limit + 1);
}
