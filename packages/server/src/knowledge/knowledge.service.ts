import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { AuditLog } from '../audit/audit.service.ts';
import { isUuid } from '../companies/companies.service.ts';
import type { CompanyCache } from '../companies/company-cache.ts';
import { boundedBody } from '../http/bounded-body.ts';
import type { OutboundFetch } from '../integrations/outbound-http.ts';
import { now } from '../storage/columns.ts';
import type { Dialect } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';
import { chunkSource, htmlTitle, type KnowledgeContentType, plainText } from './chunking.ts';
import { fullTextCandidates } from './full-text.ts';
import {
  InvalidKnowledgeSourceError,
  KnowledgeSourceNotFoundError,
  KnowledgeSourceTooLargeError,
  KnowledgeTypeNotSupportedError,
} from './knowledge.errors.ts';
import type { KnowledgeSourcesTable } from './knowledge.tables.ts';
import type { KnowledgePassage, KnowledgeSearch } from './knowledge-search.ts';
import { readPhrases } from './lexicon.ts';
import { queryTerms, rescore } from './ranking.ts';
import { type SynonymGroup, validSynonyms } from './synonyms.ts';
import { addToVocabulary, lookUp, removeFromVocabulary, vocabularyOf } from './vocabulary.ts';

export type SourceStatus = 'indexing' | 'ready' | 'failed';

/** A company's own synonyms (synonyms.ts) and when they last changed (null: none set). */
export interface CompanySynonyms {
  synonyms: SynonymGroup[];
  updatedAt: string | null;
}
export type SourceContentType = KnowledgeContentType | 'application/pdf';

export interface KnowledgeSource {
  id: string;
  title: string;
  url: string | null;
  contentType: SourceContentType;
  status: SourceStatus;
  error: string | null;
  chunks: number;
  createdAt: string;
  updatedAt: string;
}

/** What a source is made from (`POST`/`PUT /platform/v1/knowledge/sources`, the CLI, the portal). */
export type SourceInput =
  | { kind: 'text'; title: string; content: string; contentType?: KnowledgeContentType; url?: string }
  | {
      kind: 'file';
      bytes: Uint8Array;
      fileName?: string;
      declaredType?: string;
      title?: string;
      url?: string;
    }
  | { kind: 'fetch'; url: string; title?: string };

export interface KnowledgeActor {
  actor: string;
  ip?: string | null;
}

export interface KnowledgeSettings {
  maxSourceBytes: number;
  fetchTimeoutMs: number;
  relevanceThreshold: number;
}

export const TITLE_MAX = 200;
export const URL_MAX = 2048;
export const SEARCH_LIMIT_MAX = 20;
const SNIPPET_MAX = 240;
const INSERT_BATCH = 200;
/** Passages indexed before the first index upkeep (KnowledgeService afterIndexing). */
export const MAINTAIN_AFTER_CHUNKS = 1000;

/**
 * A company's knowledge: sources given as text, files or fetched pages, cut into passages (chunking.ts) and searched
 * with each store's own full-text engine (ranking.ts). Indexing happens inside the request (a source is `ready` or
 * `failed` when the call returns); `indexing` is what a concurrent reader sees meanwhile. Every read and search is
 * filtered by company: another company's source answers exactly like a missing one.
 */
/**
 * Where the service keeps, per company, whether it has a ready source — asked before every digital employee's reply
 * (`hasSources`) — and drops it after every committed change to the company's sources, on every node
 * (packages/server/src/companies/company-cache.ts).
 */
export type SourcesCache = Pick<CompanyCache, 'get' | 'invalidate'>;

const READY_SOURCES = 'knowledge:has-ready-source';

export class KnowledgeService implements KnowledgeSearch {
  /** Passages indexed by this process since the last index upkeep (afterIndexing). */
  private indexedSinceUpkeep = 0;
  /** All passages at the last upkeep. */
  private chunksAtUpkeep = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly audit: AuditLog,
    private readonly fetch: OutboundFetch,
    readonly settings: KnowledgeSettings,
    private readonly cache: SourcesCache,
  ) {}

  async create(companyId: string, input: SourceInput, actor: KnowledgeActor): Promise<KnowledgeSource> {
    // Invalid input (a bad title, an unsupported type, too large) throws before anything is stored; a page that
    // cannot be fetched or a PDF that cannot be read is stored as `failed`, with the reason.
    const read = await this.readOrFail(input);
    const id = randomUUID();
    const at = now();
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('knowledge_sources')
        .values({
          id,
          company_id: companyId,
          title: read.title,
          url: read.url ?? null,
          content_type: read.contentType,
          content: read.content,
          status: 'indexing',
          error: null,
          fetched: input.kind === 'fetch' ? 1 : 0,
          chunks: 0,
          created_at: at,
          updated_at: at,
        })
        .execute();
      await this.audited(trx, 'knowledge.source_created', companyId, id, actor, {
        source_id: id,
        kind: input.kind,
      });
      await this.replaceChunks(trx, companyId, id, read);
    });
    await this.cache.invalidate(companyId);
    await this.afterIndexing(companyId, id);
    return this.get(companyId, id);
  }

  /** Re-indexes the source from a new body (or fetches its page again); its old passages are replaced at once. */
  async update(
    companyId: string,
    id: string,
    input: SourceInput,
    actor: KnowledgeActor,
  ): Promise<KnowledgeSource> {
    const existing = await this.row(companyId, id);
    await this.db
      .updateTable('knowledge_sources')
      .set({ status: 'indexing' })
      .where('id', '=', existing.id)
      .execute();
    await this.cache.invalidate(companyId);
    let read: Indexable;
    try {
      read = await this.readOrFail(input);
    } catch (err) {
      // Refused input changes nothing: the source keeps its earlier version and status.
      await this.db
        .updateTable('knowledge_sources')
        .set({ status: existing.status })
        .where('id', '=', existing.id)
        .execute();
      await this.cache.invalidate(companyId);
      throw err;
    }
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('knowledge_sources')
        .set({
          title: read.title,
          url: read.url ?? null,
          content_type: read.contentType,
          content: read.content,
          fetched: input.kind === 'fetch' ? 1 : 0,
        })
        .where('id', '=', id)
        .execute();
      await this.audited(trx, 'knowledge.source_updated', companyId, id, actor, {
        source_id: id,
        kind: input.kind,
      });
      await this.replaceChunks(trx, companyId, id, read);
    });
    await this.cache.invalidate(companyId);
    await this.afterIndexing(companyId, id);
    return this.get(companyId, id);
  }

  /**
   * After a bulk of indexing on PostgreSQL, the knowledge tables are analysed (docs/knowledge.md "Index upkeep"):
   * once the passages indexed by this process since the last upkeep reach MAINTAIN_AFTER_CHUNKS and as many again as
   * there were at the last upkeep (so it runs at 1,000, 2,000, 4,000… passages: its total cost stays proportional to
   * what was indexed). The planner picks the GIN index or a scan of the company's passages from the table
   * statistics; statistics of an empty table make it scan every passage of the company, and autovacuum only catches
   * up a minute or more later (PostgreSQL "The Autovacuum Daemon"). SQLite needs nothing: FTS5 merges its segments
   * as it goes (automerge), and an `optimize` after bulk indexing was measured to change no search time.
   * Runs after the indexing transaction committed. A failure is not the caller's: the source is stored and
   * searchable either way (upkeep only speeds search up), so it is dropped and the next upkeep tries again.
   */
  private async afterIndexing(companyId: string, sourceId: string): Promise<void> {
    if (this.dialect !== 'postgres') return;
    const row = await this.db
      .selectFrom('knowledge_sources')
      .select('chunks')
      .where('id', '=', sourceId)
      .where('company_id', '=', companyId)
      .executeTakeFirst();
    this.indexedSinceUpkeep += Number(row?.chunks ?? 0);
    if (this.indexedSinceUpkeep < Math.max(MAINTAIN_AFTER_CHUNKS, this.chunksAtUpkeep)) return;
    this.indexedSinceUpkeep = 0;
    await this.maintainIndex().catch(() => {});
  }

  /** The upkeep itself (see afterIndexing); the number of passages it saw is the next upkeep's yardstick. */
  async maintainIndex(): Promise<void> {
    if (this.dialect !== 'postgres') return;
    await sql`analyze knowledge_chunks`.execute(this.db);
    await sql`analyze knowledge_terms`.execute(this.db);
    // Vacuumed too (one row per source): each search counts the company's ready sources with an index-only scan
    // (packages/server/src/storage/migrations/320_knowledge_search_lookups.ts), which reads only the index where the
    // visibility map says a page is all visible, and only a vacuum sets it (PostgreSQL "Index-Only Scans and
    // Covering Indexes"). `skip_locked`: a vacuum already under way (autovacuum's) is not waited for.
    await sql`vacuum (analyze, skip_locked) knowledge_sources`.execute(this.db);
    const total = await this.db
      .selectFrom('knowledge_chunks')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    this.chunksAtUpkeep = Number(total.n);
  }

  /** Deletes the source and its passages in one transaction: from then on no search finds or cites it. */
  async delete(companyId: string, id: string, actor: KnowledgeActor): Promise<void> {
    const existing = await this.row(companyId, id);
    await this.db.transaction().execute(async (trx) => {
      await this.dropChunks(trx, companyId, existing.id);
      await trx.deleteFrom('knowledge_sources').where('id', '=', existing.id).execute();
      await this.audited(trx, 'knowledge.source_deleted', companyId, id, actor, { source_id: id });
    });
    await this.cache.invalidate(companyId);
  }

  /** The audit entry of a change to source `id`, written in the change's own transaction. */
  private audited(
    trx: Kysely<Database>,
    type: 'knowledge.source_created' | 'knowledge.source_updated' | 'knowledge.source_deleted',
    companyId: string,
    id: string,
    actor: KnowledgeActor,
    details: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(
      { type, companyId, actor: actor.actor, subject: id, ip: actor.ip ?? null, details },
      trx,
    );
  }

  async get(companyId: string, id: string): Promise<KnowledgeSource> {
    return toSource(await this.row(companyId, id));
  }

  async list(companyId: string): Promise<KnowledgeSource[]> {
    const rows = await this.db
      .selectFrom('knowledge_sources')
      .selectAll()
      .where('company_id', '=', companyId)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map(toSource);
  }

  /** The source's passages as indexed, in order (what the portal shows under "see what is indexed"). */
  async chunks(
    companyId: string,
    id: string,
  ): Promise<Array<{ position: number; title: string; body: string }>> {
    const source = await this.row(companyId, id);
    return this.db
      .selectFrom('knowledge_chunks')
      .select(['position', 'title', 'body'])
      .where('source_id', '=', source.id)
      .orderBy('position')
      .execute();
  }

  /** The company's own synonyms (synonyms.ts): its groups, and when they last changed (null: never set). */
  async synonyms(companyId: string): Promise<CompanySynonyms> {
    const row = await this.db
      .selectFrom('knowledge_synonyms')
      .select(['synonyms', 'updated_at'])
      .where('company_id', '=', companyId)
      .executeTakeFirst();
    return row
      ? { synonyms: JSON.parse(row.synonyms) as SynonymGroup[], updatedAt: row.updated_at }
      : { synonyms: [], updatedAt: null };
  }

  /**
   * Replaces the company's synonyms as a whole (an empty list removes them), audited in the same transaction. The
   * next search of the company reads the new list (it is read with the vocabulary, vocabulary.ts): nothing is
   * re-indexed and nothing cached needs dropping.
   */
  async setSynonyms(companyId: string, body: unknown, actor: KnowledgeActor): Promise<CompanySynonyms> {
    const groups = validSynonyms(body);
    const at = now();
    await this.db.transaction().execute(async (trx) => {
      // One statement per change, never delete-then-insert: two PUTs at once each deleted nothing and then both
      // inserted, and on PostgreSQL the second insert hit the primary key (500). An upsert takes the row lock, so the
      // later PUT simply wins; an empty list removes the row (`updated_at` null means "none", docs/knowledge.md; when
      // it was removed stays in the audit log).
      if (groups.length === 0)
        await trx.deleteFrom('knowledge_synonyms').where('company_id', '=', companyId).execute();
      else {
        const row = { synonyms: JSON.stringify(groups), updated_at: at };
        await trx
          .insertInto('knowledge_synonyms')
          .values({ company_id: companyId, ...row })
          .onConflict((oc) => oc.column('company_id').doUpdateSet(row))
          .execute();
      }
      await this.audit.record(
        {
          type: 'knowledge.synonyms_updated',
          companyId,
          actor: actor.actor,
          subject: companyId,
          ip: actor.ip ?? null,
          details: { groups: groups.length },
        },
        trx,
      );
    });
    return { synonyms: groups, updatedAt: groups.length > 0 ? at : null };
  }

  /** Best passages first (ranking.ts); only the company's `ready` sources. */
  async search(
    companyId: string,
    query: string,
    options: { limit?: number } = {},
  ): Promise<KnowledgePassage[]> {
    const limit = Math.max(1, Math.min(SEARCH_LIMIT_MAX, options.limit ?? 5));
    const text = readPhrases(query);
    const words = queryTerms(text);
    if (words.length === 0) return [];
    const { terms, weights, exact, rare } = await lookUp(this.db, this.dialect, companyId, words, text);
    // The engine's order decides which candidates are rescored; a wider pool lets coverage lift a passage the
    // engine placed lower (a short passage that holds every word of the question).
    const pool = Math.max(30, limit * 4);
    const candidates = await fullTextCandidates(this.db, this.dialect, companyId, { terms, rare }, pool);
    return rescore(terms, candidates, { weights, exact })
      .slice(0, limit)
      .map((c) => ({
        sourceId: c.source_id,
        title: c.title,
        ...(c.url ? { url: c.url } : {}),
        snippet: snippetOf(c.body),
        text: c.body,
        score: Math.round(c.score * 10_000) / 10_000,
      }));
  }

  /** Whether the company has a ready source: one indexed lookup, then kept until its sources change. */
  async hasSources(companyId: string): Promise<boolean> {
    return (await this.cache.get(companyId, READY_SOURCES, () => this.readHasSources(companyId))) === true;
  }

  private async readHasSources(companyId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('knowledge_sources')
      .select('id')
      .where('company_id', '=', companyId)
      .where('status', '=', 'ready')
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  get relevanceThreshold(): number {
    return this.settings.relevanceThreshold;
  }

  private async row(companyId: string, id: string): Promise<KnowledgeSourcesTable> {
    if (!isUuid(id)) throw new KnowledgeSourceNotFoundError();
    const row = await this.db
      .selectFrom('knowledge_sources')
      .selectAll()
      .where('id', '=', id)
      .where('company_id', '=', companyId)
      .executeTakeFirst();
    if (!row) throw new KnowledgeSourceNotFoundError();
    return row;
  }

  /** The input as text, or — when fetching or extraction failed — a `failed` source with the reason. */
  private async readOrFail(input: SourceInput): Promise<Indexable> {
    try {
      return await this.read(input);
    } catch (err) {
      if (!(err instanceof SourceFailed)) throw err;
      const title =
        input.title?.trim() ||
        (input.kind === 'fetch' ? input.url : fileTitle(input.kind === 'file' ? input.fileName : undefined));
      return {
        title: title.slice(0, TITLE_MAX),
        url: input.url,
        content: '',
        contentType: input.kind === 'text' ? (input.contentType ?? 'text/markdown') : 'text/plain',
        chunkAs: 'text/plain',
        failed: err.message,
      };
    }
  }

  /** Deletes the source's passages and takes their words out of the company's vocabulary (packages/server/src/knowledge/vocabulary.ts). */
  private async dropChunks(trx: Kysely<Database>, companyId: string, sourceId: string): Promise<void> {
    const old = await trx
      .selectFrom('knowledge_chunks')
      .select(['title', 'body'])
      .where('source_id', '=', sourceId)
      .execute();
    await removeFromVocabulary(trx, this.dialect, companyId, vocabularyOf(old));
    await trx.deleteFrom('knowledge_chunks').where('source_id', '=', sourceId).execute();
  }

  /** Replaces the source's passages and sets its final status, inside the caller's transaction. */
  private async replaceChunks(
    trx: Kysely<Database>,
    companyId: string,
    id: string,
    read: Indexable,
  ): Promise<void> {
    await this.dropChunks(trx, companyId, id);
    const chunks = read.failed === undefined ? chunkSource(read.title, read.content, read.chunkAs) : [];
    await addToVocabulary(trx, this.dialect, companyId, vocabularyOf(chunks));
    for (let i = 0; i < chunks.length; i += INSERT_BATCH) {
      await trx
        .insertInto('knowledge_chunks')
        .values(
          chunks.slice(i, i + INSERT_BATCH).map((chunk, j) => ({
            id: randomUUID(),
            company_id: companyId,
            source_id: id,
            position: i + j,
            title: chunk.title,
            body: chunk.body,
          })),
        )
        .execute();
    }
    await trx
      .updateTable('knowledge_sources')
      .set({
        status: read.failed === undefined ? 'ready' : 'failed',
        error: read.failed ?? null,
        chunks: chunks.length,
        updated_at: now(),
      })
      .where('id', '=', id)
      .execute();
  }

  private async read(input: SourceInput): Promise<Readable> {
    const url = input.url === undefined ? undefined : validUrl(input.url);
    const title = input.title === undefined ? undefined : validTitle(input.title);
    switch (input.kind) {
      case 'text': {
        if (title === undefined) throw new InvalidKnowledgeSourceError('title', 'is required');
        if (typeof input.content !== 'string' || input.content.trim() === '')
          throw new InvalidKnowledgeSourceError('content', 'must be non-empty text');
        if (Buffer.byteLength(input.content) > this.settings.maxSourceBytes)
          throw new KnowledgeSourceTooLargeError(this.settings.maxSourceBytes);
        const contentType = input.contentType ?? 'text/markdown';
        return { title, url, content: input.content, contentType, chunkAs: contentType };
      }
      case 'file': {
        if (input.bytes.byteLength === 0) throw new InvalidKnowledgeSourceError('file', 'is empty');
        if (input.bytes.byteLength > this.settings.maxSourceBytes)
          throw new KnowledgeSourceTooLargeError(this.settings.maxSourceBytes);
        const type = fileType(input.bytes, input.declaredType, input.fileName);
        const read = await readBytes(input.bytes, type, false);
        return { ...read, title: title ?? read.title ?? fileTitle(input.fileName), url };
      }
      case 'fetch': {
        if (url === undefined) throw new InvalidKnowledgeSourceError('url', 'is required');
        const fetched = await this.fetchPage(url);
        return { ...fetched, title: title ?? fetched.title ?? url, url };
      }
    }
  }

  /**
   * Fetches a page through the outbound client (integrations/outbound-http.ts: destination policy, same-origin
   * redirects only, time limit), reading at most `maxSourceBytes`. Any failure is the source's `failed` reason.
   */
  private async fetchPage(url: string): Promise<Omit<Readable, 'title'> & { title: string | undefined }> {
    let response: Response;
    try {
      response = await this.fetch(url, {
        method: 'GET',
        headers: { accept: 'text/html, text/markdown, text/plain, application/pdf;q=0.9' },
        timeoutMs: this.settings.fetchTimeoutMs,
        signal: AbortSignal.timeout(this.settings.fetchTimeoutMs * 3),
      });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      throw new SourceFailed(`fetch failed: ${typeof code === 'string' ? code : 'connector_unreachable'}`);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new SourceFailed(`fetch failed: HTTP ${response.status}`);
    }
    const bytes = await readLimited(response, this.settings.maxSourceBytes);
    const declared = response.headers.get('content-type') ?? '';
    let type: SourceContentType;
    try {
      type = fileType(bytes, declared, new URL(url).pathname);
    } catch {
      throw new SourceFailed(
        `fetch failed: unsupported content type ${JSON.stringify(declared.slice(0, 80))}`,
      );
    }
    return readBytes(bytes, type, true);
  }
}

interface Readable {
  title: string;
  url: string | undefined;
  content: string;
  contentType: SourceContentType;
  chunkAs: KnowledgeContentType;
}

/** What is indexed: text read from the input, or the reason it could not be read (`failed`). */
interface Indexable extends Readable {
  failed?: string;
}

/** A source that could not be read (fetch or extraction failed): stored with status `failed`, not thrown. */
class SourceFailed extends Error {}

const toSource = (row: KnowledgeSourcesTable): KnowledgeSource => ({
  id: row.id,
  title: row.title,
  url: row.url,
  contentType: row.content_type as SourceContentType,
  status: row.status as SourceStatus,
  error: row.error,
  chunks: Number(row.chunks),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

function fileTitle(fileName: string | undefined): string {
  const base = (fileName ?? '')
    .split(/[\\/]/)
    .pop()
    ?.replace(/\.[^.]+$/, '')
    .trim();
  return base ? base.slice(0, TITLE_MAX) : 'Untitled';
}

function validTitle(title: unknown): string {
  if (typeof title !== 'string' || title.trim() === '' || title.length > TITLE_MAX)
    throw new InvalidKnowledgeSourceError(
      'title',
      `must be non-empty text of at most ${TITLE_MAX} characters`,
    );
  return title.trim();
}

/** Only http(s) URLs: the URL is shown to visitors as a link (the widget opens nothing else). */
export function validUrl(url: unknown): string {
  if (typeof url !== 'string' || url.length > URL_MAX)
    throw new InvalidKnowledgeSourceError(
      'url',
      `must be an http or https URL of at most ${URL_MAX} characters`,
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidKnowledgeSourceError('url', 'must be an absolute http or https URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new InvalidKnowledgeSourceError('url', 'must be an absolute http or https URL');
  if (parsed.username || parsed.password)
    throw new InvalidKnowledgeSourceError('url', 'must not carry a user name or password');
  return parsed.href;
}

const EXTENSIONS: Record<string, SourceContentType> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  html: 'text/html',
  htm: 'text/html',
  txt: 'text/plain',
  text: 'text/plain',
  pdf: 'application/pdf',
};

/**
 * The type of a file: a PDF by its signature (`%PDF-`, ISO 32000-2 §7.5.2), otherwise the declared media type, then
 * the file name's extension. Anything else is refused.
 */
export function fileType(
  bytes: Uint8Array,
  declared: string | undefined,
  fileName: string | undefined,
): SourceContentType {
  if (Buffer.from(bytes.subarray(0, 5)).toString('latin1') === '%PDF-') return 'application/pdf';
  const media = (declared ?? '').split(';')[0]!.trim().toLowerCase();
  if (media === 'text/markdown' || media === 'text/x-markdown') return 'text/markdown';
  if (media === 'text/html' || media === 'application/xhtml+xml') return 'text/html';
  const extension = /\.([a-z]+)$/i.exec(fileName ?? '')?.[1]?.toLowerCase();
  const byName = extension ? EXTENSIONS[extension] : undefined;
  if (byName && byName !== 'application/pdf') return byName;
  if (media === 'text/plain') return 'text/plain';
  if (media === '' || media === 'application/octet-stream') {
    if (byName === undefined) return 'text/plain';
  }
  throw new KnowledgeTypeNotSupportedError(media || extension || 'unknown');
}

async function readBytes(
  bytes: Uint8Array,
  type: SourceContentType,
  fetched: boolean,
): Promise<Omit<Readable, 'title' | 'url'> & { title: string | undefined; url: undefined }> {
  const fail = (message: string) =>
    fetched ? new SourceFailed(message) : new InvalidKnowledgeSourceError('file', message);
  if (type === 'application/pdf') {
    const text = await pdfText(bytes).catch(() => {
      throw new SourceFailed('the PDF could not be read');
    });
    if (!text.trim()) throw new SourceFailed('the PDF holds no text (a scan needs OCR first)');
    return { title: undefined, url: undefined, content: text, contentType: type, chunkAs: 'text/plain' };
  }
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw fail('must be UTF-8 text');
  }
  if (content.includes('\u0000')) throw fail('must be text (it holds NUL characters)');
  if (!content.trim()) throw fail('is empty');
  const title = type === 'text/html' ? htmlTitle(content) : markdownTitle(content, type);
  return { title, url: undefined, content, contentType: type, chunkAs: type };
}

function markdownTitle(content: string, type: SourceContentType): string | undefined {
  if (type !== 'text/markdown') return undefined;
  return /^\s{0,3}#\s+(.+?)\s*#*\s*$/m.exec(content)?.[1]?.slice(0, TITLE_MAX);
}

/** A PDF's text, pages separated by blank lines, through unpdf (pdf.js); loaded on first use, it is large. */
async function pdfText(bytes: Uint8Array): Promise<string> {
  const { extractText, getDocumentProxy } = await import('unpdf');
  const document = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const { text } = await extractText(document, { mergePages: false });
    return (text as string[]).map((page) => page.trim()).join('\n\n');
  } finally {
    await document.destroy().catch(() => {});
  }
}

/** The body of a response, refused past `maxBytes` while it streams (a size limit nothing can talk around). */
async function readLimited(response: Response, maxBytes: number): Promise<Uint8Array> {
  let body: Uint8Array | undefined;
  try {
    body = await boundedBody(response, maxBytes);
  } catch {
    throw new SourceFailed('fetch failed: the connection broke while reading the page');
  }
  if (!body) throw new SourceFailed(`fetch failed: the page is larger than ${maxBytes} bytes`);
  return body;
}

/** A passage's excerpt: plain text, at most SNIPPET_MAX characters, cut at a word. */
export function snippetOf(body: string): string {
  const text = plainText(body);
  if (text.length <= SNIPPET_MAX) return text;
  const cut = text.slice(0, SNIPPET_MAX - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > SNIPPET_MAX / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
