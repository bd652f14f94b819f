import { SEPARATOR } from './chunking.ts';

/**
 * What the stores' full-text engines are asked, and how their candidates are scored on one scale
 * (docs/knowledge.md "Ranking"). The engine (FTS5 bm25 / PostgreSQL ts_rank) finds and orders candidates by an OR of
 * the question's words; a passage's final score then mixes how much of the question it covers with its engine rank:
 *
 *   score = 0.6 × coverage + 0.15 × text coverage + 0.1 × source-title coverage + 0.25 × rank ÷ best rank
 *           + 0.1 × proximity
 *
 * where coverage is the share of the question's content words (stop words left out) the passage's title (the
 * source's title and heading path) or text contains, text coverage the share its text alone contains, and
 * source-title coverage the share the title of the whole source (the article) contains, compared after a light
 * suffix folding: of two passages under a matching title, the one whose own words answer wins. Proximity is the
 * share of the question's neighbouring content words ("double shot", "delivery address") that the passage also
 * holds side by side (stop words between them skipped, as in the question): a bigram form of the term-proximity
 * evidence of Tao & Zhai ("An exploration of proximity measures in information retrieval", SIGIR 2007) and of
 * Algolia's and Lucene's phrase boosts — a passage where the question's words form the same phrase is more likely
 * about the same thing than one holding them apart. The source-title
 * part is field weighting in the manner of BM25F (Robertson, Zaragoza & Taylor, "Simple BM25 extension to multiple
 * weighted fields", CIKM 2004): an article's title names what the whole article is about, so a question word found
 * there is stronger evidence than the same word in passing in another article's text (a question about an email
 * change: the article "Changing the email address of your account" over an order page that mentions both). The score is
 * reported capped at 1. Engine ranks are not comparable between questions; coverage is, so one threshold (config
 * `knowledge.relevanceThreshold`, default 0.6: about half the question's words found in the engine's best passage)
 * means the same for every question.
 */

/** English function words and chat filler: they carry no topic, so they neither match nor count in coverage. */
const STOP_WORDS = new Set(
  (
    'a about above after again all also am an and any are as at be because been before being but by can cannot ' +
    'could did do does doing done for from get got had has have having he her here hers him his how i if in into is ' +
    'it its itself just let me more most my myself no nor not now of off on once only or other our ours out over own ' +
    'please same she should so some such than that the their theirs them then there these they this those through ' +
    'to too under until up us very was we were what when where which while who whom why will with would you your ' +
    'yours hi hello hey thanks thank ok okay want need know tell like im ive id dont doesnt cant s t m d ll re ve ' +
    'much many really actually still even already yet maybe perhaps quite something anything everything ' +
    'someone anyone thing things good great lot lots bit ' +
    'isnt arent wasnt werent hasnt havent hadnt didnt wont wouldnt couldnt shouldnt mustnt neednt aint ' +
    'whats thats theres heres hows wheres whens whys whos youre youve youll youd theyre theyve'
  ).split(' '),
);

/** Most words of one question sent to the engine (a pasted essay must not become a thousand-term query). */
export const MAX_QUERY_TERMS = 32;

/** Lower-case words of letters and digits, diacritics folded (café → cafe). */
export function wordsOf(text: string): string[] {
  // ASCII text (most passages) needs no Unicode normalisation: skipping it makes rescoring several times cheaper.
  const folded = NON_ASCII.test(text) ? text.normalize('NFKD').replace(/\p{M}/gu, '') : text;
  return (
    folded
      .toLowerCase()
      .replace(/['’]/g, '')
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

const NON_ASCII = /[^\p{ASCII}]/u;

/** The question's distinct content words, in order: what the engine is asked and what coverage counts. */
export function queryTerms(query: string): string[] {
  const terms: string[] = [];
  for (const word of wordsOf(query)) {
    if (isStopWord(word) || terms.includes(word)) continue;
    terms.push(word);
    if (terms.length >= MAX_QUERY_TERMS) break;
  }
  return terms;
}

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/**
 * One word of the question and the spellings it is searched by: the word itself and, when the company's vocabulary
 * does not hold it, the indexed word one or two edits away (packages/server/src/knowledge/vocabulary.ts). A passage matches the term when it
 * holds any of them.
 */
export type QueryTerm = readonly string[];

/**
 * A light English suffix folding for coverage only (the engines stem on their own): plural, past, gerund and adverb
 * endings, so "refunds", "refunded" and "refunding" meet "refund"; then a few derivational endings that turn a verb
 * into a noun or adjective, so "delivery" meets "delivered", "payment" "pay", "confirmation" "confirm" and
 * "accessible" "accessibility" (Porter stems these apart, and snowball `english` too: the engines match the visitor's
 * form, coverage counts the word family). Words of four letters or fewer stay as they are.
 */
export function fold(word: string): string {
  const inflected = strip(word, FOLDS);
  return strip(inflected, DERIVATIONS);
}

function strip(word: string, rules: ReadonlyArray<[string, string]>): string {
  if (word.length <= 4) return word;
  for (const [suffix, replacement] of rules) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3)
      return word.slice(0, -suffix.length) + replacement;
  }
  return word;
}

/** Applied after FOLDS (so "accessible" arrives as "accessibl"); a stem keeps at least three letters. */
const DERIVATIONS: ReadonlyArray<[string, string]> = [
  ['ability', ''],
  ['ibility', ''],
  ['abl', ''],
  ['ibl', ''],
  ['ation', ''],
  ['ment', ''],
  ['ery', 'er'],
];

const FOLDS: ReadonlyArray<[string, string]> = [
  ['ies', 'y'],
  ['ied', 'y'],
  ['ing', ''],
  ['ed', ''],
  ['es', ''],
  ['ly', ''],
  ['s', ''],
  ['e', ''],
];

/** The folded words of a passage's title, of its source's title and of its text, computed once per candidate. */
interface PassageWords {
  title: ReadonlySet<string>;
  source: ReadonlySet<string>;
  body: ReadonlySet<string>;
  /**
   * The title's and then the text's content words in order (folded; stop words skipped, as in the question's terms),
   * an empty string between the two, for the proximity part of the score.
   */
  sequence: readonly string[];
  /**
   * Every word of the title and then of the text in order, stop words kept (folded), an empty string between the two:
   * where a company phrase is looked for, so that "pay on arrival" is not held by "pay at arrival".
   */
  all: readonly string[];
}

/** Folds words, remembering each: a passage repeats its words and the candidates of one question share many. */
type Folder = (word: string) => string;

function folder(): Folder {
  const seen = new Map<string, string>();
  return (word) => {
    let folded = seen.get(word);
    if (folded === undefined) {
      folded = fold(word);
      seen.set(word, folded);
    }
    return folded;
  };
}

function passageWords(title: string, body: string, foldWord: Folder = fold): PassageWords {
  // A passage's title is its source's title followed by its heading path (packages/server/src/knowledge/chunking.ts).
  const cut = title.indexOf(SEPARATOR);
  const source = cut === -1 ? title : title.slice(0, cut);
  const sequence: string[] = [];
  const all: string[] = [];
  const foldAll = (words: readonly string[]) => {
    const set = new Set<string>();
    for (const word of words) {
      const folded = foldWord(word);
      set.add(folded);
      all.push(folded);
      if (!isStopWord(word)) sequence.push(folded);
    }
    return set;
  };
  const titleSet = foldAll(wordsOf(title));
  sequence.push('');
  all.push('');
  const bodySet = foldAll(wordsOf(body));
  return { title: titleSet, source: new Set(wordsOf(source).map(foldWord)), body: bodySet, sequence, all };
}

/**
 * How much of a term the words hold: 1 for the word itself or its correction (its first `exact` spellings), the
 * synonym credit for one of its built-in synonyms (packages/server/src/knowledge/lexicon.ts) or company synonyms
 * (packages/server/src/knowledge/synonyms.ts) only, 0 for none.
 */
function held(
  words: ReadonlySet<string>,
  term: QueryTerm,
  exact: number,
  sequence: readonly string[],
): number {
  let credit = 0;
  for (let i = 0; i < term.length; i++) {
    const spelling = term[i]!;
    if (!(spelling.includes(' ') ? holdsPhrase(words, sequence, spelling) : words.has(spelling))) continue;
    if (i < exact) return 1;
    credit = SYNONYM_CREDIT;
  }
  return credit;
}

/**
 * A phrase spelling (a company synonym of several words, every word folded, joined by spaces) is held where the words
 * hold each of its words and the passage holds them all side by side, in order, stop words included: SQLite's FTS5
 * matches a phrase string word for word, and PostgreSQL's `english` configuration, which drops stop words from the
 * index, finds "pay at arrival" for "pay on arrival" and every "package" for "where my package is"; coverage reading
 * the words as SQLite does keeps both stores' scores alike (docs/knowledge.md "Company synonyms").
 */
function holdsPhrase(words: ReadonlySet<string>, sequence: readonly string[], phrase: string): boolean {
  const parts = phrase.split(' ');
  if (!parts.every((p) => words.has(p))) return false;
  for (let j = 0; j + parts.length <= sequence.length; j++)
    if (parts.every((p, k) => sequence[j + k] === p)) return true;
  return false;
}

/**
 * A synonym is weaker evidence than the visitor's own word: "pay" meets "payment method" in an article about
 * refunds, and a question about paying with something the article never names must not look half answered.
 */
export const SYNONYM_CREDIT = 0.75;

/** How terms count in coverage: each term's weight and how many of its first spellings count in full. */
export interface TermScoring {
  /** Per term (default 1). */
  weights?: readonly number[];
  /** Per term, the number of leading spellings that are the word itself or its correction (default: all). */
  exact?: readonly number[];
}

/** Share (0–1) of `terms` found in the passage's title or text, after folding. */
export function coverage(terms: readonly QueryTerm[], title: string, body: string): number {
  return coverages(foldTerms(terms), passageWords(title, body)).any;
}

/** Each term's spellings folded, as passages' words are (the order kept: it tells exact spellings from synonyms). */
function foldTerms(terms: readonly QueryTerm[]): QueryTerm[] {
  return terms.map((term) => term.map(foldSpelling));
}

/** A word folded; a phrase (words joined by spaces) as every word folded, stop words kept, joined the same way. */
const foldSpelling = (spelling: string) =>
  spelling.includes(' ') ? spelling.split(' ').map(fold).join(' ') : fold(spelling);

/**
 * Shares of `terms` (folded) found in the title or text (`any`), in the text alone (`body`) and in the source's title
 * alone (`source`), as `scoring` says; and the share of the question's neighbouring terms held side by side (`pairs`).
 */
function coverages(
  terms: readonly QueryTerm[],
  words: PassageWords,
  scoring: TermScoring = {},
): { any: number; body: number; source: number; pairs: number } {
  let all = 0;
  let any = 0;
  let body = 0;
  let source = 0;
  const found: boolean[] = [];
  terms.forEach((term, i) => {
    const weight = scoring.weights?.[i] ?? 1;
    const exact = scoring.exact?.[i] ?? term.length;
    const inBody = held(words.body, term, exact, words.all);
    const inAny = Math.max(inBody, held(words.title, term, exact, words.all));
    found.push(inAny > 0);
    all += weight;
    body += weight * inBody;
    any += weight * inAny;
    source += weight * held(words.source, term, exact, words.all);
  });
  if (all === 0) return { any: 0, body: 0, source: 0, pairs: 0 };
  let pairs = 0;
  // Only a passage holding both words of a pair is read for them side by side.
  for (let i = 1; i < terms.length; i++)
    if (found[i - 1] && found[i] && adjacent(words.sequence, terms[i - 1]!, terms[i]!)) pairs++;
  return {
    any: any / all,
    body: body / all,
    source: source / all,
    pairs: terms.length > 1 ? pairs / (terms.length - 1) : 0,
  };
}

/** Whether a spelling of `first` is directly followed by one of `second` in the sequence. */
function adjacent(sequence: readonly string[], first: QueryTerm, second: QueryTerm): boolean {
  for (let j = 1; j < sequence.length; j++)
    if (second.includes(sequence[j]!) && first.includes(sequence[j - 1]!)) return true;
  return false;
}

export interface Candidate {
  title: string;
  body: string;
  /** The engine's rank, higher is better (FTS5 bm25 negated, ts_rank as is). */
  rank: number;
}

/**
 * The source-title part of the score (see the top of this file). Measured on the `dev` half of the bench's questions
 * (bench/knowledge/README.md): 0.1 lifts recall@1 and lowers false refusals on both stores; more, or taking the
 * weight from another part, turns in-scope questions into refusals.
 */
export const SOURCE_TITLE_WEIGHT = 0.1;
/**
 * The proximity part of the score (see the top of this file). Measured on the `dev` half of the bench's questions
 * (bench/knowledge/README.md "Dev and test halves"): 0.05 lifted recall@3 on PostgreSQL only, 0.1 on both stores,
 * 0.2 no further and lowered recall@1 on the test half; out-of-scope refusals were unchanged at each.
 */
export const PAIR_WEIGHT = 0.1;

/**
 * Scores candidates on the shared scale (see the top of this file), best first; terms count as `scoring` says. The
 * order is the uncapped sum's, so that of two passages covering every word the one under a matching source title
 * still comes first.
 */
export function rescore<C extends Candidate>(
  terms: readonly QueryTerm[],
  candidates: readonly C[],
  scoring?: TermScoring,
): Array<C & { score: number }> {
  const best = Math.max(0, ...candidates.map((c) => c.rank));
  const folded = foldTerms(terms);
  const foldWord = folder();
  return candidates
    .map((c) => {
      const covered = coverages(folded, passageWords(c.title, c.body, foldWord), scoring);
      const engine = best > 0 ? Math.max(0, c.rank) / best : 0;
      return {
        ...c,
        raw:
          0.6 * covered.any +
          0.15 * covered.body +
          SOURCE_TITLE_WEIGHT * covered.source +
          0.25 * engine +
          PAIR_WEIGHT * covered.pairs,
      };
    })
    .sort((a, b) => b.raw - a.raw || b.rank - a.rank)
    .map(({ raw, ...c }) => ({ ...(c as unknown as C), score: Math.min(1, raw) }));
}

/** How the engine combines the question's terms: every one of them (AND) or any (OR). */
export type Combine = 'all' | 'any';

/**
 * SQLite FTS5 MATCH expression: every spelling as a quoted string (no operator can be injected; a quoted string of
 * several words matches only those words next to each other, in order), a term's spellings joined by OR, terms by AND
 * or OR.
 */
export function fts5Query(terms: readonly QueryTerm[], combine: Combine): string {
  const quoted = (w: string) => `"${w.replace(/"/g, '""')}"`;
  const term = (t: QueryTerm) => (t.length === 1 ? quoted(t[0]!) : `(${t.map(quoted).join(' OR ')})`);
  return terms.map(term).join(combine === 'all' ? ' AND ' : ' OR ');
}

/** PostgreSQL to_tsquery text: words are letters and digits only (wordsOf), so `|` and `&` are the only operators. */
export function tsQuery(terms: readonly QueryTerm[], combine: Combine): string {
  // A phrase (a company synonym of several words) is its words in sequence, `<->`. to_tsquery drops the stop words
  // of the `english` configuration and widens the distance for them, so "pay on arrival" also finds "pay at
  // arrival": coverage reads phrases word for word so that this never adds to a score (holdsPhrase above).
  const spelling = (w: string) => (w.includes(' ') ? `(${w.split(' ').join(' <-> ')})` : w);
  const term = (t: QueryTerm) => (t.length === 1 ? spelling(t[0]!) : `(${t.map(spelling).join(' | ')})`);
  return terms.map(term).join(combine === 'all' ? ' & ' : ' | ');
}
