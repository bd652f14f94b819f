// The bench's baseline peer: plain Okapi BM25 (k1 = 1.2, b = 0.75) over passages, computed here in memory, so the
// knowledge feature is always shown beside a ranking anyone can read in one file. Deliberately plain: lower case,
// accents folded, a short list of English stop words, no stemming, no synonyms, no typo tolerance.
//
// Passages follow the articles' structure: a markdown or HTML article is cut at its headings (each passage is the
// article's title, the heading and the text under it), a plain-text article at its blank lines.
//
// Scores are normalised to [0, 1): a passage's BM25 divided by the most any passage could score for the query's
// terms (each term's idf × (k1 + 1), the limit of BM25's term weight as the term's count grows). A term the index has
// never seen still counts in that maximum (with the idf of a term in no passage), so a query of unknown words scores
// near 0. That makes one threshold mean the same for every query: 0.2 is roughly "the best passage matches about half
// of the query's weight once at average length" (a full single match of every term scores 1 / (k1 + 1) ≈ 0.45).
import type { Article } from './data.ts';
import type { KnowledgePeer, SearchResult } from './peer.ts';

const K1 = 1.2;
const B = 0.75;
/** The baseline's relevance line on normalised scores, fixed by the reasoning above, not tuned on the questions. */
export const BASELINE_THRESHOLD = 0.2;

const STOP_WORDS = new Set(
  (
    'a about all am an and any are as at be been being but by can could did do does for from had has have how i if ' +
    'in into is it its just me my no not of on or our so than that the their them then there these this to too was ' +
    'we were what when where which who why will with would you your s t m d ll re ve'
  ).split(' '),
);

/** Lower-case words of letters and digits, accents folded (café → cafe), stop words dropped. */
export function tokenize(text: string): string[] {
  const words =
    text
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => !STOP_WORDS.has(w));
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' };

/** An HTML article as markdown-like text: headings become `#` lines, other tags go, common entities are decoded. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head)[\s\S]*?<\/\1>/gi, '')
    .replace(/<h([1-6])[^>]*>([\s\S]*?)<\/h\1>/gi, (_m, level: string, text: string) => {
      return `\n\n${'#'.repeat(Number(level))} ${text.replace(/<[^>]+>/g, '').trim()}\n\n`;
    })
    .replace(/<(p|li|ul|ol|div|article|section|br|tr)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_m, name: string) => ENTITIES[name]!)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The passages of an article (see the top of this file), empty ones left out. */
export function passagesOf(article: Article): string[] {
  if (article.contentType === 'text/plain') {
    return article.content
      .split(/\n\s*\n/)
      .map((p) => p.trim())
      .filter((p) => p !== '')
      .map((p) => `${article.title}\n${p}`);
  }
  const text = article.contentType === 'text/html' ? htmlToText(article.content) : article.content;
  const passages: string[] = [];
  let heading = '';
  let body: string[] = [];
  const flush = () => {
    const content = body.join('\n').trim();
    if (content !== '') passages.push(`${article.title}\n${heading}\n${content}`);
    body = [];
  };
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const match = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (match) {
      flush();
      heading = match[1]!.trim();
    } else {
      body.push(line);
    }
  }
  flush();
  return passages;
}

/** An in-memory BM25 index of passages, each belonging to one source; passages can be added at any time. */
export class Bm25Index {
  private readonly postings = new Map<string, { passages: number[]; counts: number[] }>();
  private readonly lengths: number[] = [];
  private readonly sources: string[] = [];
  private totalLength = 0;
  private scores = new Float64Array(1024);

  get passages(): number {
    return this.lengths.length;
  }

  add(sourceId: string, passage: string): void {
    const id = this.lengths.length;
    const terms = tokenize(passage);
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    for (const [term, count] of counts) {
      let list = this.postings.get(term);
      if (list === undefined) {
        list = { passages: [], counts: [] };
        this.postings.set(term, list);
      }
      list.passages.push(id);
      list.counts.push(count);
    }
    this.lengths.push(terms.length);
    this.sources.push(sourceId);
    this.totalLength += terms.length;
  }

  /** Robertson–Spärck Jones idf with +1 inside the log (as Lucene), never negative. */
  private idf(passagesWithTerm: number): number {
    const n = this.lengths.length;
    return Math.log(1 + (n - passagesWithTerm + 0.5) / (passagesWithTerm + 0.5));
  }

  /** The best `limit` passages for the query, normalised scores (see the top of this file), best first. */
  search(query: string, limit: number): SearchResult[] {
    const terms = [...new Set(tokenize(query))];
    const n = this.lengths.length;
    if (terms.length === 0 || n === 0) return [];
    if (this.scores.length < n) this.scores = new Float64Array(Math.max(n, this.scores.length * 2));
    const scores = this.scores;
    const touched: number[] = [];
    const averageLength = this.totalLength / n;
    let maximum = 0;
    for (const term of terms) {
      const list = this.postings.get(term);
      const idf = this.idf(list?.passages.length ?? 0);
      maximum += idf * (K1 + 1);
      if (list === undefined) continue;
      for (let i = 0; i < list.passages.length; i++) {
        const passage = list.passages[i]!;
        const tf = list.counts[i]!;
        const norm = K1 * (1 - B + (B * this.lengths[passage]!) / averageLength);
        if (scores[passage] === 0) touched.push(passage);
        scores[passage]! += (idf * (tf * (K1 + 1))) / (tf + norm);
      }
    }
    const ranked = touched
      .map((passage) => ({ passage, score: scores[passage]! }))
      .sort((x, y) => y.score - x.score || x.passage - y.passage)
      .slice(0, limit)
      .map(({ passage, score }) => ({ sourceId: this.sources[passage]!, score: score / maximum }));
    for (const passage of touched) scores[passage] = 0;
    return ranked;
  }
}

/** The baseline as a bench peer: one in-memory index per company. */
export function createBaselinePeer(name = 'baseline: BM25 in the bench'): KnowledgePeer {
  const companies = new Map<string, Bm25Index>();
  let nextSource = 0;
  return {
    name,
    relevanceThreshold: BASELINE_THRESHOLD,
    async add(companyId, article) {
      let index = companies.get(companyId);
      if (index === undefined) {
        index = new Bm25Index();
        companies.set(companyId, index);
      }
      const sourceId = `baseline-${++nextSource}`;
      const passages = passagesOf(article);
      for (const passage of passages) index.add(sourceId, passage);
      return { sourceId, chunks: passages.length };
    },
    async search(companyId, query, limit) {
      return companies.get(companyId)?.search(query, limit) ?? [];
    },
    async close() {
      companies.clear();
    },
  };
}
