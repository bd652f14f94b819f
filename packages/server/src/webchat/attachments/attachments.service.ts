import { randomUUID } from 'node:crypto';
import { pipeline, type Readable } from 'node:stream';
import type { AttachmentView } from '@parley/webchat-protocol';
import type { Kysely } from 'kysely';
import { now } from '../../storage/columns.ts';
import type { Database } from '../../storage/schema.ts';
import type { Conversation } from '../conversation.ts';
import type { AttachmentBlock, Block, MessageSnapshot, SendMessageBlock } from '../messages/message.ts';
import type { AttachmentLinks, LinkQuery } from './attachment-links.ts';
import { attachmentLinkInvalid, unknownAttachment } from './attachments.errors.ts';
import type { AttachmentsTable } from './attachments.tables.ts';
import type { BlobStore } from './blob-store.ts';
import { type AttachmentType, DEFAULT_ALLOWED_TYPES, RASTER_IMAGE_TYPES } from './content-types.ts';
import { contentDisposition, sanitizeFileName } from './file-names.ts';
import { UploadInspector } from './upload-inspector.ts';

/** A company's attachment limits as they apply (its own, else the defaults). */
export interface AttachmentSettings {
  maxAttachmentBytes: number;
  allowedTypes: AttachmentType[];
}

/** One file part of a multipart upload, as it streams in. */
export interface IncomingFile {
  stream: Readable;
  filename: string | undefined;
  declaredType: string | undefined;
  /**
   * Asked once the bytes are stored and before the attachment is kept: throws when the request as a whole is
   * refused after all (the rest of a multipart body holds a second file). What was stored is then deleted.
   */
  beforeKeep?: () => Promise<void>;
}

/** A download ready to stream: the headers to send and the bytes. */
export interface Download {
  headers: Record<string, string>;
  body: Readable;
}

export interface AttachmentsDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  links: AttachmentLinks;
  /** The default per-company limit: PARLEY_ATTACHMENT_MAX_BYTES. */
  defaultMaxBytes: number;
  /** Prefix of signed links (the public URL; read per use, a test server learns it after listen). */
  publicUrl(): string;
}

/** A stored attachment block: the snapshot block without its `url`, which is signed afresh on every read. */
type StoredAttachmentBlock = Omit<AttachmentBlock, 'url'>;

/**
 * Attachments of conversations (docs/design.md "Attachments"): streaming uploads checked by UploadInspector into
 * the BlobStore, per-company limits, signed download links, and the attachment blocks of messages — resolved from
 * what clients send, and shown with a fresh `url` wherever a snapshot leaves the server (`present`).
 */
export class AttachmentsService {
  constructor(private readonly deps: AttachmentsDeps) {}

  async settingsFor(companyId: string): Promise<AttachmentSettings> {
    const row = await this.deps.db
      .selectFrom('attachment_settings')
      .selectAll()
      .where('company_id', '=', companyId)
      .executeTakeFirst();
    return {
      maxAttachmentBytes: row?.max_attachment_bytes ?? this.deps.defaultMaxBytes,
      allowedTypes: row?.allowed_types ? JSON.parse(row.allowed_types) : [...DEFAULT_ALLOWED_TYPES],
    };
  }

  async updateSettings(companyId: string, settings: AttachmentSettings): Promise<AttachmentSettings> {
    const values = {
      max_attachment_bytes: settings.maxAttachmentBytes,
      allowed_types: JSON.stringify([...new Set(settings.allowedTypes)]),
      updated_at: now(),
    };
    await this.deps.db
      .insertInto('attachment_settings')
      .values({ company_id: companyId, ...values })
      .onConflict((oc) => oc.column('company_id').doUpdateSet(values))
      .execute();
    return this.settingsFor(companyId);
  }

  /**
   * Streams `file` into the BlobStore through the inspector (size, type, SHA-256) and records the attachment.
   * Refused uploads keep nothing: the inspector fails the stream and `put` deletes what it wrote.
   */
  async upload(
    conversation: Conversation,
    file: IncomingFile,
    uploadedBy: string,
    settings: AttachmentSettings,
  ): Promise<AttachmentView> {
    const inspector = new UploadInspector({
      maxBytes: settings.maxAttachmentBytes,
      allowedTypes: new Set(settings.allowedTypes),
      declaredType: file.declaredType,
    });
    const blobKey = randomUUID();
    // pipeline: an error on either side (client gone, limit, refused type) destroys both streams.
    pipeline(file.stream, inspector, () => undefined);
    await this.deps.blobs.put(blobKey, inspector);
    const inspected = inspector.result();
    try {
      await file.beforeKeep?.();
    } catch (err) {
      await this.deps.blobs.delete(blobKey).catch(() => undefined);
      throw err;
    }
    const row: AttachmentsTable = {
      id: randomUUID(),
      company_id: conversation.companyId,
      conversation_id: conversation.id,
      name: sanitizeFileName(file.filename, inspected.contentType),
      content_type: inspected.contentType,
      size: inspected.size,
      sha256: inspected.sha256,
      blob_key: blobKey,
      uploaded_by: uploadedBy,
      created_at: now(),
      claimed_at: null,
    };
    try {
      await this.deps.db.insertInto('attachments').values(row).execute();
    } catch (err) {
      await this.deps.blobs.delete(blobKey).catch(() => undefined);
      throw err;
    }
    return {
      id: row.id,
      name: row.name,
      content_type: row.content_type,
      size: row.size,
      sha256: row.sha256,
      url: this.urlFor(row.id),
    };
  }

  /**
   * The one translation of blocks as clients send them into stored blocks, for visitors and agents alike:
   * markdown gets an id, an attachment block is looked up among this conversation's attachments (another
   * conversation's, or an unknown id, is `unknown_attachment` naming the block's index). Called just before the
   * message is stored, so it claims the attachments it names against the sweeper.
   */
  async blocksOf(conversation: Conversation, input: ReadonlyArray<SendMessageBlock>): Promise<Block[]> {
    const ids = input.flatMap((b) => (b.type === 'attachment' ? [b.attachment_id] : []));
    const found = new Map<string, AttachmentsTable>();
    if (ids.length > 0) {
      // Claimed before they are read: a sweep running now leaves them alone (attachment-sweeper.ts); one it
      // already deleted is not found below, and the block is refused.
      await this.deps.db
        .updateTable('attachments')
        .set({ claimed_at: now() })
        .where('conversation_id', '=', conversation.id)
        .where(
          'id',
          'in',
          ids.map((id) => id.toLowerCase()),
        )
        .execute();
      const rows = await this.deps.db
        .selectFrom('attachments')
        .selectAll()
        .where('conversation_id', '=', conversation.id)
        .where(
          'id',
          'in',
          ids.map((id) => id.toLowerCase()),
        )
        .execute();
      for (const row of rows) found.set(row.id, row);
    }
    return input.map((block, index): Block => {
      if (block.type === 'markdown') return { id: randomUUID(), type: 'markdown', content: block.content };
      // parseSendMessage lets a postback be the only block of its message, so it never comes with attachments.
      if (block.type === 'postback') throw new Error('a postback is the only block of its message');
      const row = found.get(block.attachment_id.toLowerCase());
      if (!row) throw unknownAttachment(index);
      const stored: StoredAttachmentBlock = {
        id: randomUUID(),
        type: 'attachment',
        attachment_id: row.id,
        name: row.name,
        content_type: row.content_type,
        size: row.size,
      };
      // Stored without `url`: `present` signs one on every read.
      return stored as AttachmentBlock;
    });
  }

  /** `snapshot` as it leaves the server: every attachment block with a freshly signed `url`. */
  present<S extends { blocks: readonly Block[] }>(snapshot: S): S {
    if (!snapshot.blocks.some((b) => b.type === 'attachment')) return snapshot;
    return {
      ...snapshot,
      blocks: snapshot.blocks.map((b) =>
        b.type === 'attachment' ? { ...b, url: this.urlFor(b.attachment_id) } : b,
      ),
    };
  }

  presentAll(snapshots: MessageSnapshot[]): MessageSnapshot[] {
    return snapshots.map((s) => this.present(s));
  }

  /**
   * The download behind a signed link: 403 `attachment_link_invalid` for a bad or expired signature, one made for
   * another attachment, or an attachment that is gone. Headers: the detected type, its length, `nosniff`, `inline`
   * only for raster images (anything else is downloaded, never rendered on our origin), and a sandboxing CSP so
   * even a rendered file can run nothing (CSP 3 `sandbox`, `default-src 'none'`).
   */
  async download(id: string, query: LinkQuery): Promise<Download> {
    if (!/^[0-9a-f-]{36}$/.test(id) || !this.deps.links.verify(id, query)) throw attachmentLinkInvalid();
    const row = await this.deps.db
      .selectFrom('attachments')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    const body = row && (await this.deps.blobs.get(row.blob_key));
    if (!row || !body) throw attachmentLinkInvalid();
    const inline = RASTER_IMAGE_TYPES.has(row.content_type);
    return {
      headers: {
        'content-type': row.content_type === 'text/plain' ? 'text/plain; charset=utf-8' : row.content_type,
        'content-length': String(row.size),
        'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', row.name),
        'x-content-type-options': 'nosniff',
        'content-security-policy':
          "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'",
        'cross-origin-resource-policy': 'cross-origin',
        'cache-control': 'private, max-age=3600',
        'referrer-policy': 'no-referrer',
      },
      body,
    };
  }

  /** A freshly signed download link of attachment `id` (the workspace's file list, the privacy export's `url`). */
  urlFor(id: string): string {
    return `${this.deps.publicUrl()}${this.deps.links.pathFor(id)}`;
  }
}

/** Whether an error is a refusal of an attachment block (publish hooks answer these with their own code). */
export const isUnknownAttachment = (err: unknown): boolean =>
  (err as { code?: string } | undefined)?.code === 'unknown_attachment';
