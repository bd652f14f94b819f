import { InvalidKnowledgeSynonymsError } from './knowledge.errors.ts';
import { readPhrases } from './lexicon.ts';
import { fold, isStopWord, MAX_QUERY_TERMS, wordsOf } from './ranking.ts';

/**
 * A company's own synonyms for knowledge search (docs/knowledge.md "Company synonyms"): groups of words or phrases of
 * equal meaning in that company's help centre — "cash on delivery" and "pay on arrival", "chamber of commerce" and
 * "company registration number" (equivalent synonyms: every term of a group finds the others). The built-in lexicon
 * (packages/server/src/knowledge/lexicon.ts) stays general English: what only one company says lives here, because
 * adding it to the shared lexicon would widen every other company's search too.
 *
 * The question is expanded, not the index: a question word that is a term of a group is searched by its own spelling
 * and, as alternatives, by the other terms of the group, exactly like a built-in synonym, and counts in coverage with
 * the same weaker credit (packages/server/src/knowledge/ranking.ts SYNONYM_CREDIT). Where a multi-word term stands in
 * the question, each of its content words stays a query term of its own and gains the term (in full credit) and the
 * group's other terms (synonym credit) as spellings; the engines match a spelling of several words as a phrase (FTS5
 * phrase strings; PostgreSQL `<->`). A list only ever adds spellings, so what a question found without it, it still
 * finds. So a change counts from the next search, without re-indexing anything.
 */

/** Most groups a company keeps, terms in a group, characters and words in a term (docs/errors.md). */
export const SYNONYM_GROUPS_MAX = 200;
export const SYNONYM_TERMS_MIN = 2;
export const SYNONYM_TERMS_MAX = 10;
export const SYNONYM_TERM_MAX_LENGTH = 60;
export const SYNONYM_TERM_MAX_WORDS = 6;

export interface SynonymGroup {
  terms: string[];
}

/**
 * The body of `PUT /platform/v1/knowledge/synonyms`, checked: `{synonyms:[{terms:[…]}]}` within the limits above,
 * every term with at least one word that is not a stop word (a term of stop words alone would match nearly every
 * question) and no term twice in the whole list (a term belongs to one group, so what it finds is unambiguous).
 * Terms are stored trimmed, with their inner white space collapsed.
 */
export function validSynonyms(body: unknown): SynonymGroup[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidKnowledgeSynonymsError('body', 'must be a JSON object {"synonyms":[{"terms":[…]}]}');
  const extra = Object.keys(body).find((k) => k !== 'synonyms');
  if (extra) throw new InvalidKnowledgeSynonymsError(extra, 'is not a field of this body');
  const list = (body as { synonyms?: unknown }).synonyms;
  if (!Array.isArray(list)) throw new InvalidKnowledgeSynonymsError('synonyms', 'must be an array of groups');
  if (list.length > SYNONYM_GROUPS_MAX)
    throw new InvalidKnowledgeSynonymsError('synonyms', `must hold at most ${SYNONYM_GROUPS_MAX} groups`);
  const seen = new Map<string, string>();
  return list.map((group, i) => {
    const at = `synonyms[${i}]`;
    if (typeof group !== 'object' || group === null || Array.isArray(group))
      throw new InvalidKnowledgeSynonymsError(at, 'must be an object {"terms":[…]}');
    const other = Object.keys(group).find((k) => k !== 'terms');
    if (other) throw new InvalidKnowledgeSynonymsError(`${at}.${other}`, 'is not a field of a group');
    const terms = (group as { terms?: unknown }).terms;
    if (!Array.isArray(terms) || terms.length < SYNONYM_TERMS_MIN || terms.length > SYNONYM_TERMS_MAX)
      throw new InvalidKnowledgeSynonymsError(
        `${at}.terms`,
        `must be an array of ${SYNONYM_TERMS_MIN} to ${SYNONYM_TERMS_MAX} terms`,
      );
    return {
      terms: terms.map((term, j) => {
        const field = `${at}.terms[${j}]`;
        if (typeof term !== 'string') throw new InvalidKnowledgeSynonymsError(field, 'must be a string');
        const text = term.trim().replace(/\s+/g, ' ');
        if (text === '' || text.length > SYNONYM_TERM_MAX_LENGTH)
          throw new InvalidKnowledgeSynonymsError(
            field,
            `must be non-empty text of at most ${SYNONYM_TERM_MAX_LENGTH} characters`,
          );
        const words = wordsOf(text);
        if (words.length === 0 || words.length > SYNONYM_TERM_MAX_WORDS)
          throw new InvalidKnowledgeSynonymsError(field, `must hold 1 to ${SYNONYM_TERM_MAX_WORDS} words`);
        if (words.every(isStopWord))
          throw new InvalidKnowledgeSynonymsError(field, 'must hold a word that is not a stop word');
        const key = keyOf(text).join(' ');
        const earlier = seen.get(key);
        if (earlier) throw new InvalidKnowledgeSynonymsError(field, `repeats ${earlier}`);
        seen.set(key, field);
        return text;
      }),
    };
  });
}

/**
 * How a term is recognised in a question: its words after the built-in two-word phrases (so "sign up" in a group
 * meets the question's "sign up", which the lexicon reads as "register") and the light suffix folding of coverage
 * ("parcels" meets "parcel"). Stop words stay: "pay on arrival" is not "pay arrival".
 */
const keyOf = (text: string) => wordsOf(readPhrases(text)).map(fold);

/**
 * One question item: a content word of the question, with the terms of the company group it stands in (if any). A
 * word is always searched by its own spelling (with its built-in synonyms and its correction, vocabulary.ts): a
 * company list only ever adds spellings, so a passage found without the list is still found with it.
 */
export interface AskedItem {
  /** One content word of the question. */
  word: string;
  /** The other terms of the word's company group, each its words joined by spaces; empty without one. */
  mates: readonly string[];
  /**
   * When the word is part of a multi-word company term found in the question: that term's spelling (its words joined
   * by spaces). It counts as the question's own words (in full); `mates` are the group's other terms.
   */
  matched?: string;
}

interface CompiledTerm {
  key: readonly string[];
  group: number;
  /** The term as the engines and coverage see it: its words joined by spaces. */
  spelling: string;
}

interface Compiled {
  /** By the folded first word of their key, longest first. */
  byFirst: Map<string, CompiledTerm[]>;
  groups: string[][];
}

/**
 * Compiled lists by company, each with the stored JSON it was compiled from: a search compiles a company's list once,
 * not per question, and a changed list replaces the company's entry instead of crowding out other companies'. The
 * JSON is compared, not `updated_at`: two changes within one millisecond must not keep the older list. Least recently
 * used companies leave first, so the busiest stay compiled.
 */
const compiled = new Map<string, { json: string; table: Compiled }>();
const COMPILED_KEPT = 256;

function compile(companyId: string, json: string): Compiled {
  const known = compiled.get(companyId);
  compiled.delete(companyId);
  if (known?.json === json) {
    compiled.set(companyId, known);
    return known.table;
  }
  const list = JSON.parse(json) as SynonymGroup[];
  const groups = list.map((g) => g.terms.map((t) => wordsOf(t).join(' ')));
  const byFirst = new Map<string, CompiledTerm[]>();
  list.forEach((g, group) => {
    g.terms.forEach((t, i) => {
      const key = keyOf(t);
      if (key.length === 0) return;
      const entry = { key, group, spelling: groups[group]![i]! };
      byFirst.set(key[0]!, [...(byFirst.get(key[0]!) ?? []), entry]);
    });
  });
  for (const list of byFirst.values()) list.sort((a, b) => b.key.length - a.key.length);
  if (compiled.size >= COMPILED_KEPT) compiled.delete(compiled.keys().next().value!);
  const table = { byFirst, groups };
  compiled.set(companyId, { json, table });
  return table;
}

/**
 * The question's items, in order: its content words as `queryTerms` gives them (stop words out, each once, at most
 * MAX_QUERY_TERMS), each with the company group it stands in. Terms are found longest first, left to right. A word
 * that is a one-word term gets the group's other terms; each content word of a multi-word term found in the question
 * stays its own item and gets the term and the group's other terms as further spellings. The question's words are
 * never replaced by the term: "refund guarantee" (which a term "money back guarantee" meets after the built-in phrases)
 * must still find the passage that says "refund guarantee" (issue 22 review). `text` is the question after the
 * built-in phrases (packages/server/src/knowledge/lexicon.ts `readPhrases`).
 */
export function askedItems(text: string, companyId: string, synonymsJson: string | null): AskedItem[] {
  const words = wordsOf(text);
  const table = synonymsJson ? compile(companyId, synonymsJson) : undefined;
  const items: AskedItem[] = [];
  const push = (item: AskedItem) => {
    const earlier = items.findIndex((i) => i.word === item.word);
    if (earlier === -1) {
      if (items.length < MAX_QUERY_TERMS) items.push(item);
      return;
    }
    // A word asked twice, once inside a term: it keeps every spelling either place gave it.
    const had = items[earlier]!;
    const extra = [...(item.matched ? [item.matched] : []), ...item.mates];
    items[earlier] = { ...had, mates: [...new Set([...had.mates, ...extra])] };
  };
  const folded = table ? words.map(fold) : [];
  for (let i = 0; i < words.length; i++) {
    const found = table?.byFirst.get(folded[i]!)?.find((t) => t.key.every((k, j) => folded[i + j] === k));
    if (found) {
      const mates = table!.groups[found.group]!.filter((s) => s !== found.spelling);
      if (found.key.length === 1) push({ word: words[i]!, mates });
      else
        for (const word of words.slice(i, i + found.key.length))
          if (!isStopWord(word)) push({ word, mates, matched: found.spelling });
      i += found.key.length - 1;
    } else if (!isStopWord(words[i]!)) push({ word: words[i]!, mates: [] });
  }
  return items;
}
