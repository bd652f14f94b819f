export interface KnowledgeSourcesTable {
  id: string;
  company_id: string;
  title: string;
  /** http/https URL the source came from or points to; null when it has none. */
  url: string | null;
  /** `text/markdown`, `text/html`, `text/plain` or `application/pdf` (what was given, before extraction). */
  content_type: string;
  /** The text the chunks were cut from (markdown, HTML or plain text; a PDF's extracted text). */
  content: string;
  /** `indexing` while being (re-)indexed, `ready` when searchable, `failed` with `error`. */
  status: string;
  error: string | null;
  /** 1 when the source was fetched from `url` (`{url, fetch: true}`): a PUT may fetch it again. */
  fetched: number;
  chunks: number;
  created_at: string;
  updated_at: string;
}

export interface KnowledgeChunksTable {
  id: string;
  company_id: string;
  source_id: string;
  /** Order of the chunk within its source, from 0. */
  position: number;
  /** The source's title and the heading path of the chunk: `Returns › Refunds`. */
  title: string;
  body: string;
}

/** A company's vocabulary: every word of its passages (ranking.ts `wordsOf`) and how many sources hold it. */
export interface KnowledgeTermsTable {
  company_id: string;
  term: string;
  /** The term's first letter (typo candidates are read by it). */
  initial: string;
  sources: number;
}

/** A company's own synonyms (packages/server/src/knowledge/synonyms.ts): its whole list, one row per company. */
export interface KnowledgeSynonymsTable {
  company_id: string;
  /** JSON `[{"terms":["…","…"]}, …]` as validated by `validSynonyms`. */
  synonyms: string;
  updated_at: string;
}

export interface KnowledgeTables {
  knowledge_sources: KnowledgeSourcesTable;
  knowledge_chunks: KnowledgeChunksTable;
  knowledge_terms: KnowledgeTermsTable;
  knowledge_synonyms: KnowledgeSynonymsTable;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends KnowledgeTables {}
}
