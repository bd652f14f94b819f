/** A knowledge source as Settings → Knowledge lists it (docs/knowledge.md). */
export interface KnowledgeSourceView {
  id: string;
  title: string;
  url: string | null;
  content_type: string;
  status: 'indexing' | 'ready' | 'failed';
  /** Why indexing failed; absent otherwise. */
  error?: string;
  chunks: number;
  created_at: string;
  updated_at: string;
}

/** `GET /portal/api/knowledge/sources`. */
export interface KnowledgeSourceList {
  sources: KnowledgeSourceView[];
}

/** One passage of a source as indexed. */
export interface KnowledgeChunkView {
  position: number;
  /** The source's title and the heading path: `Returns › Refunds`. */
  title: string;
  body: string;
}

/** `GET /portal/api/knowledge/sources/{id}/chunks`. */
export interface KnowledgeChunkList {
  chunks: KnowledgeChunkView[];
}

/** One hit of `GET /portal/api/knowledge/search`, best first. */
export interface KnowledgeSearchResultView {
  source_id: string;
  title: string;
  url?: string;
  snippet: string;
  score: number;
}

/** `GET /portal/api/knowledge/search`. */
export interface KnowledgeSearchAnswer {
  results: KnowledgeSearchResultView[];
}

/**
 * The company's synonyms as `GET`/`PUT /portal/api/knowledge/synonyms` (and /platform/v1/knowledge/synonyms) answer
 * them (docs/knowledge.md "Company synonyms"); `updated_at` is null when the company keeps none.
 */
export interface KnowledgeSynonymsAnswer {
  synonyms: Array<{ terms: string[] }>;
  updated_at: string | null;
}
