// The knowledge feature as a bench peer (peer.ts): Parley's own KnowledgeService on a real store — SQLite in a fresh
// data folder, or PostgreSQL in a schema of its own on the shared test server — driven exactly as the platform route
// drives it (`create` with a text source, `search` with the route's scores). Nothing here ranks or chunks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropTestSchema, uniqueSchema } from '@parley/testing/databases';
import { loadConfig } from '../../packages/server/src/config/load.ts';
import { type AppContext, createContext } from '../../packages/server/src/context.ts';
import { createLogger } from '../../packages/server/src/logging/logger.ts';
import type { Article } from './data.ts';
import type { KnowledgePeer, PeerFactory } from './peer.ts';

/** The PostgreSQL the bench uses: BENCH_DATABASE_URL, else the tests' (scripts/test.mjs), else the local default. */
const postgresUrl = () =>
  process.env.BENCH_DATABASE_URL ??
  process.env.PARLEY_TEST_DATABASE_URL ??
  process.env.DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test';

/**
 * `synonyms`: a `PUT /platform/v1/knowledge/synonyms` body given to every company the peer creates (README.md
 * "Company synonyms": corpus/synonyms.json).
 */
export function featurePeer(store: 'sqlite' | 'postgres', options: { synonyms?: unknown } = {}): PeerFactory {
  const name = `feature (${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'})${options.synonyms ? ' + synonyms' : ''}`;
  return {
    name,
    async start(): Promise<KnowledgePeer> {
      const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-knowledge-'));
      const databaseUrl = store === 'postgres' ? postgresUrl() : undefined;
      const schema = databaseUrl ? uniqueSchema() : undefined;
      const config = loadConfig({}, { dataDir, logLevel: 'error', ...(databaseUrl ? { databaseUrl } : {}) });
      const ctx: AppContext = await createContext(config, createLogger('error'), { schema });
      // The bench names companies by its own ids; each becomes a real company on first use.
      const companies = new Map<string, string>();
      const companyOf = async (key: string) => {
        let id = companies.get(key);
        if (!id) {
          id = (await ctx.companies.create(`Bench ${key}`)).id;
          if (options.synonyms) await ctx.knowledge.setSynonyms(id, options.synonyms, { actor: 'bench' });
          companies.set(key, id);
        }
        return id;
      };
      return {
        name,
        relevanceThreshold: ctx.knowledge.relevanceThreshold,
        async add(companyId: string, article: Article) {
          const source = await ctx.knowledge.create(
            await companyOf(companyId),
            {
              kind: 'text',
              title: article.title,
              content: article.content,
              contentType: article.contentType,
              url: article.url,
            },
            { actor: 'bench' },
          );
          if (source.status !== 'ready') throw new Error(`${article.id} was not indexed: ${source.error}`);
          return { sourceId: source.id, chunks: source.chunks };
        },
        async search(companyId: string, query: string, limit: number) {
          const passages = await ctx.knowledge.search(await companyOf(companyId), query, { limit });
          return passages.map((p) => ({ sourceId: p.sourceId, score: p.score }));
        },
        async close() {
          await ctx.close();
          if (schema && databaseUrl) await dropTestSchema(schema, databaseUrl);
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  };
}
