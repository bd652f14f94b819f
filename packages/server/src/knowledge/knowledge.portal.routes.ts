import type { KnowledgeChunkList, KnowledgeSearchAnswer, KnowledgeSourceList } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../http/types.ts';
import { actorOf, companyOf } from '../users/portal-session.ts';
import { searchResultView, sourceInputOf, sourceView, synonymsView } from './knowledge.schemas.ts';
import type { KnowledgeActor, KnowledgeService } from './knowledge.service.ts';

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 1000 }),
  limit: Type.Optional(Type.String({ pattern: '^([1-9]|1[0-9]|20)$' })),
});

const actor = (request: FastifyRequest): KnowledgeActor => ({ actor: actorOf(request), ip: request.ip });

/**
 * Settings → Knowledge (docs/knowledge.md), over the same service as `/platform/v1/knowledge` and the CLI: sources as
 * JSON text or a page to fetch (the bodies of the platform route), their passages as indexed, search, and the
 * company's synonyms.
 */
/** What the Knowledge page uses: the sources' lifecycle and search, and the size bound its bodies are checked against. */
export interface KnowledgePortalDeps {
  knowledge: Pick<
    KnowledgeService,
    'list' | 'create' | 'update' | 'delete' | 'chunks' | 'search' | 'settings' | 'synonyms' | 'setSynonyms'
  >;
}

export function registerKnowledgePortalRoutes(app: App, { knowledge }: KnowledgePortalDeps): void {
  const bodyLimit = knowledge.settings.maxSourceBytes + 64 * 1024;

  app.get(
    '/knowledge/sources',
    async (request): Promise<KnowledgeSourceList> => ({
      sources: (await knowledge.list(companyOf(request))).map(sourceView),
    }),
  );

  app.post('/knowledge/sources', { bodyLimit }, async (request, reply) => {
    const source = await knowledge.create(companyOf(request), sourceInputOf(request.body), actor(request));
    return reply.status(201).send(sourceView(source));
  });

  app.put('/knowledge/sources/:id', { bodyLimit, schema: { params: IdParams } }, async (request) =>
    sourceView(
      await knowledge.update(
        companyOf(request),
        request.params.id,
        sourceInputOf(request.body),
        actor(request),
      ),
    ),
  );

  app.delete('/knowledge/sources/:id', { schema: { params: IdParams } }, async (request, reply) => {
    await knowledge.delete(companyOf(request), request.params.id, actor(request));
    return reply.status(204).send();
  });

  app.get(
    '/knowledge/sources/:id/chunks',
    { schema: { params: IdParams } },
    async (request): Promise<KnowledgeChunkList> => ({
      chunks: await knowledge.chunks(companyOf(request), request.params.id),
    }),
  );

  // The company's synonyms (docs/knowledge.md "Company synonyms"): the bodies of /platform/v1/knowledge/synonyms.
  app.get('/knowledge/synonyms', async (request) =>
    synonymsView(await knowledge.synonyms(companyOf(request))),
  );

  app.put('/knowledge/synonyms', async (request) =>
    synonymsView(await knowledge.setSynonyms(companyOf(request), request.body, actor(request))),
  );

  app.get(
    '/knowledge/search',
    { schema: { querystring: SearchQuery } },
    async (request): Promise<KnowledgeSearchAnswer> => {
      const passages = await knowledge.search(companyOf(request), request.query.q, {
        limit: Number(request.query.limit ?? 5),
      });
      return { results: passages.map(searchResultView) };
    },
  );
}
