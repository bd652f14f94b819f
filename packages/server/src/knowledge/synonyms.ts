import { InvalidKnowledgeSynonymsError } from './knowledge.errors.ts';
import { readPhrases } from './lexicon.ts';
import { fold, isStopWord, MAX_QUERY_TERMS, wordsOf } from './ranking.ts';

/**
 * A company's own synonyms for knowledge search (docs/knowledge.md "Company synonyms"): groups of words or phrases of
 * equal meaning in that company's help centre — "cash on delivery" and "pay on arrival", "chamber of commerce" and
 * "company registration number" — the kind of list Algolia, Zendesk Guide and Elasticsearch let a company keep
 * (equivalent synonyms: every term of a group finds the others). The built-in lexicon
 * (packages/server/src/knowledge/lexicon.ts) stays general English; what only one company says lives here.
 *
 * The question is expanded, not the index: a question word or phrase that is a term of a group is searched by its own
 * spelling and, as alternatives, by the other terms of the group, exactly like a built-in synonym, and counts in
 * coverage with the same weaker credit (packages/server/src/knowledge/ranking.ts SYNONYM_CREDIT). A multi-word term is
 * one query term: the engines match it as a phrase (FTS5 phrase strings; PostgreSQL `<->`), and coverage counts it
 * where its content words stand side by side. So a change counts from the next search, without re-indexing anything.
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

/** One question item: a word of the question, or a company term found in it with the other terms of its group. */
export interface AskedItem {
  /** The word (one content word of the question), or the company term's words joined by spaces. */
  word: string;
  /** The other terms of the word's company group, each its words joined by spaces; empty without one. */
  mates: readonly string[];
  /** For a multi-word company term: the question's content words it stood for (their rarity is the term's). */
  span?: readonly string[];
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

/** Compiled lists by their stored JSON: a search compiles a company's list once, not per question. */
const compiled = new Map<string, Compiled>();
const COMPILED_KEPT = 256;

function compile(json: string): Compiled {
  const known = compiled.get(json);
  if (known) return known;
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
  compiled.set(json, { byFirst, groups });
  return { byFirst, groups };
}

/**
 * The question's items, in order: its content words as `queryTerms` gives them (stop words out, each once, at most
 * MAX_QUERY_TERMS), except where a company term stands, longest first, left to right: that becomes one item with the
 * other terms of its group. `text` is the question after the built-in phrases (lexicon.ts `readPhrases`).
 */
export function askedItems(text: string, synonymsJson: string | null): AskedItem[] {
  const words = wordsOf(text);
  const table = synonymsJson ? compile(synonymsJson) : undefined;
  const items: AskedItem[] = [];
  const taken = new Set<string>();
  const push = (item: AskedItem) => {
    if (taken.has(item.word) || items.length >= MAX_QUERY_TERMS) return;
    taken.add(item.word);
    items.push(item);
  };
  const folded = table ? words.map(fold) : [];
  for (let i = 0; i < words.length; i++) {
    const found = table?.byFirst.get(folded[i]!)?.find((t) => t.key.every((k, j) => folded[i + j] === k));
    if (found) {
      const mates = table!.groups[found.group]!.filter((s) => s !== found.spelling);
      const span = words.slice(i, i + found.key.length).filter((w) => !isStopWord(w));
      push(
        found.key.length === 1 || span.length === 0
          ? { word: words[i]!, mates }
          : { word: found.spelling, mates, span },
      );
      i += found.key.length - 1;
    } else if (!isStopWord(words[i]!)) push({ word: words[i]!, mates: [] });
  }
  return items;
}
