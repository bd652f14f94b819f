/** Attachments (migration 024): metadata, the store-backed blobs' chunks, and each company's limits. */

export interface AttachmentsTable {
  id: string;
  company_id: string;
  conversation_id: string;
  /** The sanitized file name (file-names.ts): shown and sent in Content-Disposition, never used as a path. */
  name: string;
  /** Detected from the bytes (content-types.ts), never the client's claim alone. */
  content_type: string;
  size: number;
  /** Lowercase hex SHA-256 of the bytes, computed while streaming. */
  sha256: string;
  /** Where the BlobStore keeps the bytes. */
  blob_key: string;
  /** `session:<X-Session-Id>`, `visitor:<key>`, `client:<id>` or `user:<id>`. */
  uploaded_by: string;
  created_at: string;
  /** When a message being sent last named it (migration 074): the sweeper leaves it alone for a while after. */
  claimed_at: string | null;
}

/** One chunk of a blob (StoreBlobStore): chunks `0..n` in `seq` order are the bytes. */
export interface AttachmentBlobChunksTable {
  blob_key: string;
  seq: number;
  data: Buffer;
  /** Epoch ms the blob's write began (migration 074): tells a blob nobody owns from an upload still streaming. */
  created_ms: number;
}

/** A company's own attachment limits; a `null` column means the default (config / DEFAULT_ALLOWED_TYPES). */
export interface AttachmentSettingsTable {
  company_id: string;
  max_attachment_bytes: number | null;
  /** JSON array of content types. */
  allowed_types: string | null;
  updated_at: string;
}

export interface AttachmentsTables {
  attachments: AttachmentsTable;
  attachment_blob_chunks: AttachmentBlobChunksTable;
  attachment_settings: AttachmentSettingsTable;
}

// These tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../../storage/schema.ts' {
  interface Database extends AttachmentsTables {}
}
