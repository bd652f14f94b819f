import { type StoreWait, untilStoreAnswers } from '../storage/store-retry.ts';

/**
 * The seam other capabilities (digital employees, bench) use to ask a company's knowledge for passages. Implemented
 * by `KnowledgeService` (knowledge.service.ts) on both stores; callers never see how ranking works.
 */
export interface KnowledgePassage {
  /** The knowledge source the passage was cut from (`/platform/v1/knowledge/sources/{id}`). */
  sourceId: string;
  /** The source's title followed by the heading path of the passage, e.g. `Shipping › Returns`. */
  title: string;
  /** The source's URL, when it has one (only http/https). */
  url?: string;
  /** A short excerpt (≤ 240 characters) for lists and citations. */
  snippet: string;
  /** The passage's full text (one chunk). */
  text: string;
  /** Relevance, higher is better; comparable only within one result list. */
  score: number;
}

export interface KnowledgeSearch {
  /**
   * The score (0–1) from which a passage is relevant enough to answer from (config `knowledge.relevanceThreshold`,
   * docs/knowledge.md "Thresholds"); below it the digital employees say they do not know.
   */
  readonly relevanceThreshold: number;
  /**
   * Whether the company has any `ready` source. A company without knowledge keeps its employees as they were (no
   * "I don't know" guardrail); one with knowledge gets grounded answers (knowledge/grounding.ts).
   */
  hasSources(companyId: string): Promise<boolean>;
  /** Best passages first; only the company's `ready` sources; an empty list when nothing matches. */
  search(companyId: string, query: string, options?: { limit?: number }): Promise<KnowledgePassage[]>;
}

/**
 * The same knowledge, its reads waiting out a store that cannot answer for a moment (a full pool under a burst, a
 * restart: packages/server/src/storage/store-retry.ts) instead of failing. For the replies of digital employees: a
 * reply whose visitor message was acknowledged must not end `responder_failed` because one read met a pool wait —
 * its history read and its completion wait the same way
 * (packages/server/src/webchat/conversations/reply-runner.ts).
 */
export function waitingForStore(knowledge: KnowledgeSearch, wait: StoreWait): KnowledgeSearch {
  return {
    get relevanceThreshold() {
      return knowledge.relevanceThreshold;
    },
    hasSources: (companyId) => untilStoreAnswers(() => knowledge.hasSources(companyId), wait),
    search: (companyId, query, options) =>
      untilStoreAnswers(() => knowledge.search(companyId, query, options), wait),
  };
}
