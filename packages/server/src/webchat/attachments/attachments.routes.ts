import { pipeline } from 'node:stream';
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { AttachmentView } from '@parley/webchat-protocol';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/schema.ts';
import { AppError } from '../../errors/app-error.ts';
import type { App } from '../../http/types.ts';
import { principalOf } from '../../oauth/principal.ts';
import type { AbuseLimits } from '../abuse-limits.ts';
import type { Conversation } from '../conversation.ts';
import { ownConversation, type SessionConversations } from '../identity/sdk-session.ts';
import { DOWNLOAD_PATH_PREFIX } from './attachment-links.ts';
import { AttachmentError, attachmentRequired, attachmentTooLarge } from './attachments.errors.ts';
import type { AttachmentsService } from './attachments.service.ts';
import type { UploadQuota } from './upload-quota.ts';

/** What receiving an upload takes: the company's attachment settings and store, and the visitors' byte quotas. */
export interface UploadDeps {
  attachments: Pick<AttachmentsService, 'settingsFor' | 'upload'>;
  uploadQuota: Pick<UploadQuota, 'admit' | 'meter'>;
}

/** The visitor's upload: their own conversations, and the uploads-per-minute limits. */
export interface SdkAttachmentDeps extends UploadDeps {
  conversations: SessionConversations;
  limiter: Pick<AbuseLimits, 'enforce'>;
  limits: Pick<Config['webchat'], 'uploadsPerMinutePerSession' | 'uploadsPerMinutePerIp'>;
}

/**
 * An agent's upload (platform, portal): any conversation of the caller's company. `find` is typed here rather than
 * imported: conversations/ builds on attachments/, so attachments/ must not import it back.
 */
export interface AgentAttachmentDeps extends UploadDeps {
  commands: { find(companyId: string, conversationId: string): Promise<Conversation> };
}

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

/** Room for the multipart framing around the file (boundaries, part headers) in a `Content-Length` check. */
const MULTIPART_OVERHEAD_BYTES = 16 * 1024;

/** The 201 answer of both upload routes (docs/design.md "Attachments"). */
const AttachmentCreated = Type.Object({
  id: Type.String(),
  name: Type.String(),
  content_type: Type.String(),
  size: Type.Integer(),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  url: Type.String({ description: 'Signed download link, valid for 1 hour; needs no headers.' }),
});

const uploadDescription =
  '`multipart/form-data` with one file part named `file`. The type is detected from the bytes (PNG, JPEG, GIF, WebP, PDF, UTF-8 plain text; SVG only when the company allows it) and must agree with the part’s declared type (415 `attachment_type_not_allowed`); over the company’s `max_attachment_bytes` → 413 `attachment_too_large`, refused while streaming. A visitor’s uploads count against hourly byte quotas per session and per address (429 `rate_limited` with `Retry-After`). An upload no message names within 24 h is deleted. Answers the attachment with a signed `url` (1 h); send it in a message as `{"type":"attachment","attachment_id"}`.';

/**
 * The API reference of an upload: the multipart body (one binary `file` part) is documented here, but never
 * validated as a whole — it is streamed and checked by the inspector (see `streamedBody`).
 */
const uploadSchema = (tags: string[], summary: string) => ({
  tags,
  summary,
  description: uploadDescription,
  consumes: ['multipart/form-data'],
  params: IdParams,
  body: Type.Object({ file: Type.String({ format: 'binary' }) }, { required: ['file'] }),
  response: { 201: AttachmentCreated },
});

/**
 * Route options of an upload: the schemas above document it, and this compiler accepts every request part as is,
 * since the body is a stream Fastify never parses (the path id is checked by the conversation lookup, 404).
 */
const streamedBody = { validatorCompiler: () => () => true };

/**
 * Reads the one `file` part of a multipart upload and streams it into the conversation's attachments. A
 * `Content-Length` already over the limit is refused before a byte is read; otherwise the inspector refuses while
 * streaming (attachments.service.ts). Multipart framing errors are `attachment_required`.
 */
async function receiveUpload(
  deps: UploadDeps,
  request: FastifyRequest,
  conversation: Conversation,
  uploadedBy: string,
  quota?: QuotaHolder,
): Promise<AttachmentView> {
  const settings = await deps.attachments.settingsFor(conversation.companyId);
  const header = request.headers['content-length'];
  const announced = header === undefined ? undefined : Number(header);
  if (announced !== undefined && announced > settings.maxAttachmentBytes + MULTIPART_OVERHEAD_BYTES)
    throw attachmentTooLarge(settings.maxAttachmentBytes);
  if (!request.isMultipart()) throw attachmentRequired();
  if (quota) await deps.uploadQuota.admit(quota.sessionId, quota.ip, announced);
  // Only the file parts (fields are skipped): exactly one, named `file`.
  const parts = request
    .files({
      // One byte over the limit reaches the inspector, which refuses it (busboy stops reading there).
      limits: { fileSize: settings.maxAttachmentBytes + 1, files: 1, parts: 4, fields: 3, fieldSize: 1024 },
      throwFileSizeLimit: false,
    })
    [Symbol.asyncIterator]();
  const part = await nextPart(parts);
  if (part?.fieldname !== 'file') throw attachmentRequired();
  // A body that ended inside the file (no closing boundary) while the handler was still awaiting the store: busboy
  // has already ended and destroyed the part before anything read it, and Node's pipeline never settles for such a
  // stream (it waits for an `end` that cannot come) — so the upload would never be answered.
  if (part.file.destroyed) throw attachmentRequired();
  // The quota counts the file's bytes as they arrive (upload-quota.ts); an error on either side ends both.
  const stream = quota
    ? pipeline(part.file, deps.uploadQuota.meter(quota.sessionId, quota.ip), () => undefined)
    : part.file;
  try {
    return await deps.attachments.upload(
      conversation,
      {
        stream,
        filename: part.filename,
        declaredType: part.mimetype,
        beforeKeep: () => noFurtherFile(parts),
      },
      uploadedBy,
      settings,
    );
  } catch (err) {
    // Refusals (type, size, quota) stand as they are.
    if (err instanceof AppError) throw err;
    // A multipart body that ended early or broke mid-file: the client's fault, nothing was kept. (A request whose
    // body was read to its end is destroyed too — Node ends it — so only an incomplete one counts.)
    const cut = request.raw.destroyed && !request.raw.complete;
    if ((err as Error).message?.includes('terminated early') || cut) throw attachmentRequired();
    throw err;
  }
}

type Parts = AsyncIterator<MultipartFile>;

/** Whose upload quotas (upload-quota.ts) an upload counts against: a visitor session's and its address's. */
interface QuotaHolder {
  sessionId: string;
  ip: string;
}

/** The next file of the body; a broken body or a part over the limits is the client's `attachment_required`. */
async function nextPart(parts: Parts): Promise<MultipartFile | undefined> {
  try {
    const next = await parts.next();
    return next.done ? undefined : next.value;
  } catch (err) {
    if (err instanceof AttachmentError) throw err;
    throw attachmentRequired();
  }
}

/**
 * Reads the rest of the body after the file: fields are fine, a second file is not (exactly one `file` part,
 * docs/errors.md `attachment_required`) — busboy's file limit reports it as an error here.
 */
async function noFurtherFile(parts: Parts): Promise<void> {
  if ((await nextPart(parts)) !== undefined) throw attachmentRequired();
}

/** How much of a refused upload's remaining body is read and discarded, and for how long, before closing. */
const LINGER_BYTES = 4 * 1024 * 1024;
const LINGER_MS = 2_000;

/**
 * A refused upload whose body is still arriving (413 or 415 while streaming): the answer has been sent, and the
 * connection is closed only after a bounded "lingering close" (RFC 9112 §9.6) — the rest is read and discarded
 * for at most LINGER_BYTES or LINGER_MS. Closing at once would make the client's next write fail and the TCP reset
 * can discard the answer before it reads it; reading to the end could mean gigabytes for nothing.
 */
async function lingerThenClose(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const raw = request.raw;
  if (reply.statusCode < 400 || raw.complete || raw.destroyed) return;
  let discarded = 0;
  const close = () => {
    clearTimeout(timer);
    raw.socket?.destroy();
  };
  const timer = setTimeout(close, LINGER_MS);
  timer.unref();
  raw.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_BYTES) close();
  });
  raw.once('end', () => clearTimeout(timer));
  raw.resume();
}

/** `POST /sdk/v1/conversations/{id}/attachments`, inside the SDK plugin (session headers, Origin, visitor token). */
export function registerSdkAttachmentRoutes(sdk: App, deps: SdkAttachmentDeps): void {
  sdk.register(async (uploads) => {
    await uploads.register(multipart);
    uploads.addHook('onResponse', lingerThenClose);
    uploads.post(
      '/conversations/:id/attachments',
      { ...streamedBody, schema: uploadSchema(['webchat-sdk'], 'Upload an attachment') },
      async (request, reply) => {
        const { id } = request.params as { id: string };
        const conversation = await ownConversation(deps.conversations, request, id);
        const s = request.sdkSession!;
        // Counted before a byte is read: every upload lands in the shared store (docs/config.md "Webchat").
        await deps.limiter.enforce(
          [
            { key: `upl:s:${s.sessionId}`, limit: deps.limits.uploadsPerMinutePerSession },
            { key: `upl:ip:${request.ip}`, limit: deps.limits.uploadsPerMinutePerIp },
          ],
          'uploads',
        );
        const uploadedBy = s.visitor ? `visitor:${s.visitor.key}` : `session:${s.sessionId}`;
        const quota = { sessionId: s.sessionId, ip: request.ip };
        return reply.status(201).send(await receiveUpload(deps, request, conversation, uploadedBy, quota));
      },
    );
  });
}

/** `POST /platform/v1/conversations/{id}/attachments` (`conversations:write`). */
export function registerPlatformAttachmentRoutes(app: App, deps: AgentAttachmentDeps): void {
  app.register(async (uploads) => {
    await uploads.register(multipart);
    uploads.addHook('onResponse', lingerThenClose);
    uploads.post(
      '/platform/v1/conversations/:id/attachments',
      {
        ...streamedBody,
        config: { requiredScope: 'conversations:write' },
        schema: uploadSchema(['conversations'], 'Upload an attachment'),
      },
      async (request, reply) => {
        const { companyId, clientId } = principalOf(request);
        const { id } = request.params as { id: string };
        const conversation = await deps.commands.find(companyId, id);
        return reply.status(201).send(await receiveUpload(deps, request, conversation, `client:${clientId}`));
      },
    );
  });
}

/** Registers the portal's upload (agents attaching a file to a post); the caller's company decides. */
export function registerPortalAttachmentRoute(
  app: App,
  deps: AgentAttachmentDeps,
  path: string,
  who: (request: FastifyRequest) => { companyId: string; uploadedBy: string },
  routeConfig: Record<string, unknown>,
): void {
  app.register(async (uploads) => {
    await uploads.register(multipart);
    uploads.addHook('onResponse', lingerThenClose);
    uploads.post(path, { config: routeConfig, schema: { params: IdParams } }, async (request, reply) => {
      const { companyId, uploadedBy } = who(request);
      const conversation = await deps.commands.find(companyId, (request.params as { id: string }).id);
      return reply.status(201).send(await receiveUpload(deps, request, conversation, uploadedBy));
    });
  });
}

/**
 * `GET /webchat/attachments/{id}?expires&signature`: the signed link itself is the authorisation (no headers,
 * so an `<img>` can load it); anything wrong with it is 403 `attachment_link_invalid`.
 */
export function registerAttachmentDownloadRoute(
  app: App,
  attachments: Pick<AttachmentsService, 'download'>,
): void {
  app.get(
    `${DOWNLOAD_PATH_PREFIX}:id`,
    {
      schema: {
        tags: ['webchat-sdk'],
        summary: 'Download an attachment (signed link)',
        description:
          'The `url` of an attachment block or upload. Raster images are served `inline`, everything else as `attachment`; always `X-Content-Type-Options: nosniff` and a sandboxing Content-Security-Policy. A bad or expired signature, or one made for another attachment → 403 `attachment_link_invalid`.',
        params: IdParams,
        querystring: Type.Object({
          expires: Type.Optional(Type.String({ maxLength: 20 })),
          signature: Type.Optional(Type.String({ maxLength: 100 })),
        }),
      },
    },
    async (request, reply) => {
      const download = await attachments.download(request.params.id, request.query);
      return reply.headers(download.headers).send(download.body);
    },
  );
}
