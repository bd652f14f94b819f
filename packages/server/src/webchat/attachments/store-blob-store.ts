import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Database } from '../../storage/schema.ts';
import type { BlobStore } from './blob-store.ts';

/** Bytes per chunk row: what is held in memory per upload or download at most (plus one stream buffer). */
const BLOB_CHUNK_BYTES = 256 * 1024;

/**
 * The default BlobStore: blobs in the database (SQLite or PostgreSQL), as rows of at most BLOB_CHUNK_BYTES, so every
 * node of a cluster serves every file and neither an upload nor a download ever holds a whole file. Chunks are
 * written as they fill, each in its own statement (a transaction held open for a slow client's whole upload would
 * stall SQLite's other writers); a failed `put` deletes what it wrote. The attachment row that names the key is
 * only written after `put` resolved, so a half-written blob is never reachable.
 */
export class StoreBlobStore implements BlobStore {
  constructor(private readonly db: Kysely<Database>) {}

  async put(key: string, source: Readable): Promise<void> {
    // Every chunk carries when the blob's write began: deleteUnowned leaves a blob this young alone.
    const createdMs = Date.now();
    let seq = 0;
    // What arrived since the last chunk row, as latin1 strings (one character per byte): on V8's heap, not pinned
    // socket buffers, so hundreds of stalled uploads leave no fragmented C heap behind (http/body-text.ts says why).
    let pending: string[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      if (pendingBytes === 0) return;
      const data = Buffer.from(pending.length === 1 ? pending[0]! : pending.join(''), 'latin1');
      pending = [];
      pendingBytes = 0;
      await this.db
        .insertInto('attachment_blob_chunks')
        .values({ blob_key: key, seq: seq++, data, created_ms: createdMs })
        .execute();
    };
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        let rest = chunk;
        while (rest.length > 0) {
          const take = Math.min(rest.length, BLOB_CHUNK_BYTES - pendingBytes);
          pending.push(rest.toString('latin1', 0, take));
          pendingBytes += take;
          rest = rest.subarray(take);
          if (pendingBytes === BLOB_CHUNK_BYTES) await flush();
        }
      }
      await flush();
    } catch (err) {
      await this.delete(key).catch(() => undefined);
      throw err;
    }
  }

  async get(key: string): Promise<Readable | undefined> {
    const first = await this.chunk(key, 0);
    if (first === undefined) return undefined;
    const next = (seq: number) => this.chunk(key, seq);
    // One chunk row read at a time, as the response drains (Readable.from pulls on demand).
    return Readable.from(
      (async function* () {
        yield first;
        for (let seq = 1; ; seq++) {
          const data = await next(seq);
          if (data === undefined) return;
          yield data;
        }
      })(),
      { objectMode: false },
    );
  }

  async delete(key: string): Promise<void> {
    await this.db.deleteFrom('attachment_blob_chunks').where('blob_key', '=', key).execute();
  }

  /**
   * Up to `limit` blobs whose write began before `writtenBeforeMs` and that no attachment row names: a conversation
   * (or company) was deleted and its attachment rows with it, the sweeper deleted an unsent upload's row, or a
   * process died between a blob and its row. Finding them reads the covering index (`seq`, `created_ms`,
   * `blob_key`) and the attachments' `blob_key` index, never a blob's bytes; deleting re-checks the owner in the
   * same statement. Returns how many blobs were deleted.
   */
  async deleteUnowned(writtenBeforeMs: number, limit: number): Promise<number> {
    const keys = await this.db
      .selectFrom('attachment_blob_chunks as chunk')
      .select('chunk.blob_key')
      .where('chunk.seq', '=', 0)
      .where('chunk.created_ms', '<', writtenBeforeMs)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('attachments')
              .select('attachments.id')
              .whereRef('attachments.blob_key', '=', 'chunk.blob_key'),
          ),
        ),
      )
      .limit(limit)
      .execute();
    if (keys.length === 0) return 0;
    await this.db
      .deleteFrom('attachment_blob_chunks')
      .where(
        'blob_key',
        'in',
        keys.map((k) => k.blob_key),
      )
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('attachments')
              .select('attachments.id')
              .whereRef('attachments.blob_key', '=', 'attachment_blob_chunks.blob_key'),
          ),
        ),
      )
      .execute();
    return keys.length;
  }

  private async chunk(key: string, seq: number): Promise<Buffer | undefined> {
    const row = await this.db
      .selectFrom('attachment_blob_chunks')
      .select('data')
      .where('blob_key', '=', key)
      .where('seq', '=', seq)
      .executeTakeFirst();
    return row ? Buffer.from(row.data) : undefined;
  }
}
