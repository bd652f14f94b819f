import type { Readable } from 'node:stream';

/**
 * Where attachment bytes live, behind one small interface so the store-backed default (store-blob-store.ts) can be
 * swapped for an S3-compatible object store without touching anything else:
 *
 * - `put(key, source)` consumes `source` to its end and keeps its bytes under `key` (a fresh random id the caller
 *   chose; never a user-supplied name). It must not hold the whole stream in memory — S3 does this with a multipart
 *   upload (`CreateMultipartUpload` / `UploadPart` per chunk / `CompleteMultipartUpload`). If `source` errors (a
 *   size limit, a refused content type, a client that went away), `put` rejects with that error and keeps nothing
 *   (S3: `AbortMultipartUpload`).
 * - `get(key)` streams the bytes back in order (S3: `GetObject`); `undefined` when nothing is stored under `key`.
 * - `delete(key)` forgets them; deleting an unknown key is not an error (S3: `DeleteObject` is idempotent too).
 * - `deleteUnowned(writtenBeforeMs, limit)` deletes up to `limit` blobs written before that time whose key no
 *   attachment row names, and says how many (S3: list objects by `LastModified`, ask the attachments table which
 *   keys it names, `DeleteObjects` the rest). This is how a blob's lifetime follows its attachment row, whatever
 *   deleted the row (attachment-sweeper.ts); blobs younger than the cut-off may be uploads still streaming.
 *
 * Every node of a cluster must see the same blobs (the link an `<img>` loads may reach any node).
 */
export interface BlobStore {
  put(key: string, source: Readable): Promise<void>;
  get(key: string): Promise<Readable | undefined>;
  delete(key: string): Promise<void>;
  deleteUnowned(writtenBeforeMs: number, limit: number): Promise<number>;
}
