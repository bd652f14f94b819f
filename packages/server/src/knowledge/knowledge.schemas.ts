import type {
  KnowledgeSearchResultView,
  KnowledgeSourceView,
  KnowledgeSynonymsAnswer,
} from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import { InvalidKnowledgeSourceError } from './knowledge.errors.ts';
import {
  type CompanySynonyms,
  type KnowledgeSource,
  SEARCH_LIMIT_MAX,
  type SourceInput,
  TITLE_MAX,
  URL_MAX,
} from './knowledge.service.ts';
import type { KnowledgePassage } from './knowledge-search.ts';
import {
  SYNONYM_GROUPS_MAX,
  SYNONYM_TERM_MAX_LENGTH,
  SYNONYM_TERM_MAX_WORDS,
  SYNONYM_TERMS_MAX,
  SYNONYM_TERMS_MIN,
} from './synonyms.ts';

export const SourceIdParams = Type.Object({
  id: Type.String({ maxLength: 100, description: 'Source id (UUID)' }),
});

export const SourceView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  title: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  content_type: Type.String({ enum: ['text/markdown', 'text/html', 'text/plain', 'application/pdf'] }),
  status: Type.String({ enum: ['indexing', 'ready', 'failed'] }),
  error: Type.Optional(Type.String({ description: 'Why a `failed` source could not be indexed' })),
  chunks: Type.Integer({ minimum: 0, description: 'Passages the source was cut into' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export const sourceView = (s: KnowledgeSource): KnowledgeSourceView => ({
  id: s.id,
  title: s.title,
  url: s.url,
  content_type: s.contentType,
  status: s.status,
  ...(s.error ? { error: s.error } : {}),
  chunks: s.chunks,
  created_at: s.createdAt,
  updated_at: s.updatedAt,
});

export const SourceList = Type.Object({ sources: Type.Array(SourceView) });

/** The JSON bodies of POST and PUT, documented for the API reference (validated by `sourceInputOf`). */
export const SourceBody = Type.Union([
  Type.Object(
    {
      title: Type.String({ minLength: 1, maxLength: TITLE_MAX }),
      content: Type.String({ minLength: 1 }),
      content_type: Type.Optional(Type.String({ enum: ['text/markdown', 'text/html', 'text/plain'] })),
      url: Type.Optional(
        Type.String({ maxLength: URL_MAX, description: 'http(s) link shown with citations' }),
      ),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      url: Type.String({ maxLength: URL_MAX }),
      fetch: Type.Literal(true),
      title: Type.Optional(Type.String({ minLength: 1, maxLength: TITLE_MAX })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      file: Type.String({
        format: 'binary',
        description: 'multipart/form-data: PDF, markdown, HTML or text',
      }),
      title: Type.Optional(Type.String()),
      url: Type.Optional(Type.String()),
    },
    { required: ['file'] },
  ),
]);

/** A JSON body of POST or PUT as a source input; anything else is 400 `invalid_knowledge_source`. */
export function sourceInputOf(body: unknown): SourceInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidKnowledgeSourceError('body', 'must be a JSON object');
  const b = body as Record<string, unknown>;
  const allowed = b.fetch === true ? ['url', 'fetch', 'title'] : ['title', 'content', 'content_type', 'url'];
  const extra = Object.keys(b).find((k) => !allowed.includes(k));
  if (extra) throw new InvalidKnowledgeSourceError(extra, 'is not a field of this body');
  for (const field of ['title', 'url', 'content', 'content_type'])
    if (b[field] !== undefined && typeof b[field] !== 'string')
      throw new InvalidKnowledgeSourceError(field, 'must be a string');
  if (b.fetch === true) {
    if (typeof b.url !== 'string') throw new InvalidKnowledgeSourceError('url', 'is required with fetch');
    return { kind: 'fetch', url: b.url, ...(typeof b.title === 'string' ? { title: b.title } : {}) };
  }
  if (b.fetch !== undefined) throw new InvalidKnowledgeSourceError('fetch', 'must be true when given');
  const type = b.content_type ?? 'text/markdown';
  if (type !== 'text/markdown' && type !== 'text/html' && type !== 'text/plain')
    throw new InvalidKnowledgeSourceError('content_type', 'must be text/markdown, text/html or text/plain');
  if (typeof b.title !== 'string') throw new InvalidKnowledgeSourceError('title', 'is required');
  if (typeof b.content !== 'string') throw new InvalidKnowledgeSourceError('content', 'is required');
  return {
    kind: 'text',
    title: b.title,
    content: b.content,
    contentType: type,
    ...(typeof b.url === 'string' ? { url: b.url } : {}),
  };
}

export const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 1000, description: 'The question or words to look for' }),
  limit: Type.Optional(
    Type.String({
      pattern: '^([1-9]|1[0-9]|20)$',
      description: `Results wanted, 1–${SEARCH_LIMIT_MAX} (default 5)`,
    }),
  ),
});

export const SearchResultView = Type.Object({
  source_id: Type.String({ format: 'uuid' }),
  title: Type.String({ description: "The source's title and the passage's heading path" }),
  url: Type.Optional(Type.String()),
  snippet: Type.String(),
  score: Type.Number({ description: 'Relevance 0–1 (docs/knowledge.md "Ranking"); higher is better' }),
});

export const SearchResults = Type.Object({ results: Type.Array(SearchResultView) });

export const searchResultView = (p: KnowledgePassage): KnowledgeSearchResultView => ({
  source_id: p.sourceId,
  title: p.title,
  ...(p.url ? { url: p.url } : {}),
  snippet: p.snippet,
  score: p.score,
});

/** The company's synonyms (docs/knowledge.md "Company synonyms"); validated by `validSynonyms` (synonyms.ts). */
export const SynonymsBody = Type.Object(
  {
    synonyms: Type.Array(
      Type.Object(
        {
          terms: Type.Array(
            Type.String({
              minLength: 1,
              maxLength: SYNONYM_TERM_MAX_LENGTH,
              description: 'A word or phrase',
            }),
            {
              minItems: SYNONYM_TERMS_MIN,
              maxItems: SYNONYM_TERMS_MAX,
              description:
                `Words or phrases of equal meaning (each at most ${SYNONYM_TERM_MAX_WORDS} words); ` +
                'each finds the others',
            },
          ),
        },
        { additionalProperties: false },
      ),
      { maxItems: SYNONYM_GROUPS_MAX },
    ),
  },
  { additionalProperties: false },
);

export const SynonymsView = Type.Object({
  synonyms: SynonymsBody.properties.synonyms,
  updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the list last changed; null when the company has none',
  }),
});

export const synonymsView = (s: CompanySynonyms): KnowledgeSynonymsAnswer => ({
  synonyms: s.synonyms,
  updated_at: s.updatedAt,
});
