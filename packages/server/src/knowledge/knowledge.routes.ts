import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.ts';
import type { App } from '../http/types.ts';
import { bearerErrorResponses } from '../oauth/bearer.schemas.ts';
import { principalOf } from '../oauth/principal.ts';
import { InvalidKnowledgeSourceError, KnowledgeSourceTooLargeError } from './knowledge.errors.ts';
import {
  SearchQuery,
  SearchResults,
  SourceBody,
  SourceIdParams,
  SourceList,
  SourceView,
  SynonymsBody,
  SynonymsView,
  searchResultView,
  sourceInputOf,
  sourceView,
  synonymsView,
} from './knowledge.schemas.ts';
import type { KnowledgeActor, KnowledgeService, SourceInput } from './knowledge.service.ts';

/** Room for JSON quoting and multipart framing around a source of the largest size allowed. */
const BODY_OVERHEAD_BYTES = 64 * 1024;

/**
 * The knowledge API for API clients (docs/knowledge.md): sources and search, scoped to the token's company; another
 * company's source answers exactly like a missing one (404).
 */
export async function registerKnowledgeRoutes(app: App, knowledge: KnowledgeService): Promise<void> {
  app.get(
    '/platform/v1/knowledge/sources',
    {
      config: { requiredScope: 'knowledge:read' },
      schema: {
        tags: ['knowledge'],
        summary: "List the company's knowledge sources",
        security: [{ bearer: [] }],
        response: { 200: SourceList, ...bearerErrorResponses },
      },
    },
    async (request) => ({
      sources: (await knowledge.list(principalOf(request).companyId)).map(sourceView),
    }),
  );

  app.get(
    '/platform/v1/knowledge/sources/:id',
    {
      config: { requiredScope: 'knowledge:read' },
      schema: {
        tags: ['knowledge'],
        summary: 'Read a knowledge source',
        security: [{ bearer: [] }],
        params: SourceIdParams,
        response: { 200: SourceView, ...bearerErrorResponses },
      },
    },
    async (request) => sourceView(await knowledge.get(principalOf(request).companyId, request.params.id)),
  );

  app.delete(
    '/platform/v1/knowledge/sources/:id',
    {
      config: { requiredScope: 'knowledge:write' },
      schema: {
        tags: ['knowledge'],
        summary: 'Delete a knowledge source',
        description: 'Its passages go with it: no search finds them and no answer cites them afterwards.',
        security: [{ bearer: [] }],
        params: SourceIdParams,
        response: { 204: { type: 'null' }, ...bearerErrorResponses },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await knowledge.delete(principal.companyId, request.params.id, actorOf(request));
      return reply.status(204).send();
    },
  );

  app.get(
    '/platform/v1/knowledge/search',
    {
      config: { requiredScope: 'knowledge:read' },
      schema: {
        tags: ['knowledge'],
        summary: "Search the company's knowledge",
        description:
          "Ranked passages of `ready` sources, best first: full text on the store's own engine, rescored by how much " +
          'of the question a passage covers (docs/knowledge.md "Ranking").',
        security: [{ bearer: [] }],
        querystring: SearchQuery,
        response: { 200: SearchResults, ...bearerErrorResponses },
      },
    },
    async (request) => {
      const { q, limit } = request.query;
      const passages = await knowledge.search(principalOf(request).companyId, q, {
        limit: Number(limit ?? 5),
      });
      return { results: passages.map(searchResultView) };
    },
  );

  app.get(
    '/platform/v1/knowledge/synonyms',
    {
      config: { requiredScope: 'knowledge:read' },
      schema: {
        tags: ['knowledge'],
        summary: "Read the company's knowledge synonyms",
        security: [{ bearer: [] }],
        response: { 200: SynonymsView, ...bearerErrorResponses },
      },
    },
    async (request) => synonymsView(await knowledge.synonyms(principalOf(request).companyId)),
  );

  app.put(
    '/platform/v1/knowledge/synonyms',
    {
      // The body is checked by `validSynonyms` (400 `invalid_knowledge_synonyms` naming the field); the schema
      // documents it.
      validatorCompiler: () => () => true,
      config: { requiredScope: 'knowledge:write' },
      schema: {
        tags: ['knowledge'],
        summary: "Replace the company's knowledge synonyms",
        description:
          'Groups of words or phrases of equal meaning in this company (docs/knowledge.md "Company synonyms"): a ' +
          'question holding one term of a group is also searched by the others, from the next search on, without ' +
          're-indexing. The list is replaced as a whole; `{"synonyms":[]}` removes it.',
        security: [{ bearer: [] }],
        body: SynonymsBody,
        response: { 200: SynonymsView, ...bearerErrorResponses },
      },
    },
    async (request) =>
      synonymsView(
        await knowledge.setSynonyms(principalOf(request).companyId, request.body, actorOf(request)),
      ),
  );

  // POST and PUT take JSON or multipart/form-data; their own scope registers the multipart parser.
  await app.register(async (plugin) => {
    const scope = plugin as unknown as App;
    await scope.register(multipart);
    const bodyLimit = knowledge.settings.maxSourceBytes + BODY_OVERHEAD_BYTES;
    const description =
      'JSON `{"title","content","content_type"?,"url"?}` (markdown by default), JSON `{"url","fetch":true}` (the page ' +
      'is fetched through the outbound policy), or `multipart/form-data` with one `file` part (PDF, markdown, HTML ' +
      'or text) and optional `title` and `url` fields. Indexed before the answer: `status` is `ready`, or `failed` ' +
      'with `error` when the page could not be fetched or the file read.';
    // The body is read by `inputOf` (JSON or multipart); the schema documents it.
    const documented = { validatorCompiler: () => () => true };
    scope.post(
      '/platform/v1/knowledge/sources',
      {
        ...documented,
        bodyLimit,
        config: { requiredScope: 'knowledge:write' },
        schema: {
          tags: ['knowledge'],
          summary: 'Add a knowledge source',
          description,
          consumes: ['application/json', 'multipart/form-data'],
          security: [{ bearer: [] }],
          body: SourceBody,
          response: { 201: SourceView, ...bearerErrorResponses },
        },
      },
      async (request, reply) => {
        const input = await inputOf(request, knowledge.settings.maxSourceBytes);
        const source = await knowledge.create(principalOf(request).companyId, input, actorOf(request));
        return reply.status(201).send(sourceView(source));
      },
    );
    scope.put(
      '/platform/v1/knowledge/sources/:id',
      {
        ...documented,
        bodyLimit,
        config: { requiredScope: 'knowledge:write' },
        schema: {
          tags: ['knowledge'],
          summary: 'Replace a knowledge source and index it again',
          description,
          consumes: ['application/json', 'multipart/form-data'],
          security: [{ bearer: [] }],
          params: SourceIdParams,
          body: SourceBody,
          response: { 200: SourceView, ...bearerErrorResponses },
        },
      },
      async (request) => {
        const { id } = request.params as { id: string };
        const input = await inputOf(request, knowledge.settings.maxSourceBytes);
        return sourceView(
          await knowledge.update(principalOf(request).companyId, id, input, actorOf(request)),
        );
      },
    );
  });
}

const actorOf = (request: FastifyRequest): KnowledgeActor => ({
  actor: `client:${principalOf(request).clientId}`,
  ip: request.ip,
});

/** The source input of a POST or PUT: a JSON body, or a multipart form with one `file` part. */
async function inputOf(request: FastifyRequest, maxBytes: number): Promise<SourceInput> {
  if (!request.isMultipart()) {
    const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json')
      throw new InvalidKnowledgeSourceError('body', 'must be application/json or multipart/form-data');
    return sourceInputOf(request.body);
  }
  try {
    return await multipartInputOf(request, maxBytes);
  } catch (err) {
    if (err instanceof AppError) throw err;
    // A multipart body that ended early or broke mid-part (busboy's "Premature close", "terminated early", a
    // malformed boundary) is the client's fault and nothing was stored: a 400, never a logged 500.
    throw new InvalidKnowledgeSourceError('file', 'the multipart body is incomplete or malformed');
  }
}

/** A multipart form with one `file` part and the optional `title` and `url` fields. */
async function multipartInputOf(request: FastifyRequest, maxBytes: number): Promise<SourceInput> {
  const fields: Record<string, string> = {};
  let file: { bytes: Buffer; fileName: string; declaredType: string } | undefined;
  for await (const part of request.parts({
    limits: { fileSize: maxBytes + 1, files: 1, fields: 4, fieldSize: 4096, parts: 6 },
  })) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file' || file) {
        part.file.resume();
        throw new InvalidKnowledgeSourceError(
          part.fieldname,
          'is not a file part of this form (send one `file`)',
        );
      }
      const bytes = await part.toBuffer().catch((err: unknown) => {
        if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE')
          throw new KnowledgeSourceTooLargeError(maxBytes);
        throw err;
      });
      if (bytes.byteLength > maxBytes) throw new KnowledgeSourceTooLargeError(maxBytes);
      file = { bytes, fileName: part.filename, declaredType: part.mimetype };
    } else {
      if (part.fieldname !== 'title' && part.fieldname !== 'url')
        throw new InvalidKnowledgeSourceError(part.fieldname, 'is not a field of this form');
      fields[part.fieldname] = String(part.value);
    }
  }
  if (!file) throw new InvalidKnowledgeSourceError('file', 'is required (one multipart part named file)');
  return {
    kind: 'file',
    bytes: file.bytes,
    fileName: file.fileName,
    declaredType: file.declaredType,
    ...(fields.title !== undefined ? { title: fields.title } : {}),
    ...(fields.url !== undefined ? { url: fields.url } : {}),
  };
}
