// What the knowledge bench measures: a search engine over one company's articles, driven the way Parley's
// knowledge sources are (add an article, search a company's passages). The baseline (baseline.ts) and the
// knowledge feature (plugged in at the one seam in knowledge.bench.ts) both take this shape, so every figure is
// computed by the same code for each of them.
import type { Article } from './data.ts';

/** One ranked passage, as `GET /platform/v1/knowledge/search` returns it: its source and its score. */
export interface SearchResult {
  sourceId: string;
  /** Higher is more relevant (a peer whose engine ranks the other way, like FTS5's `bm25()`, negates it). */
  score: number;
}

export interface KnowledgePeer {
  /** The row label in the bench's tables, e.g. "feature (SQLite)". */
  readonly name: string;
  /**
   * The peer's own line between relevant and not: a question whose best result scores below it is refused (the
   * "I don't know, shall I get a person?" path). `-Infinity` when the peer filters in `search` itself, so that
   * only an empty answer is a refusal.
   */
  readonly relevanceThreshold: number;
  /** Indexes one article for the company; `chunks` is how many passages it became. */
  add(companyId: string, article: Article): Promise<{ sourceId: string; chunks: number }>;
  /** At most `limit` passages of the company's articles, best first (one source may appear more than once). */
  search(companyId: string, query: string, limit: number): Promise<SearchResult[]>;
  close(): Promise<void>;
}

/** Starts a fresh, empty peer: each measurement begins from nothing indexed. */
export interface PeerFactory {
  readonly name: string;
  start(): Promise<KnowledgePeer>;
}
