import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { download, fileForm, sdkUpload } from '@parley/testing/webchat/attachment-fixtures';
import {
  bearer,
  createConversation,
  fetchPlatformToken,
  newVisitor,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';
import { AttachmentSweeper, CLAIM_MS } from './attachment-sweeper.ts';
import { StoreBlobStore } from './store-blob-store.ts';

/** The sweeper under test keeps uploads 1 s and leaves blobs younger than 1 s: its clock moves them past both. */
const TTL_MS = 1000;
const GRACE_MS = 1000;

for (const database of TEST_DATABASES) {
  describe(`attachment sweeper (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    let token: string;
    const deleted = { unsent_attachment: 0, unowned_blob: 0 };
    let sweeper: AttachmentSweeper;

    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('Sweep Co')).id;
      token = await fetchPlatformToken(server, companyId, ['conversations:read', 'conversations:write']);
      sweeper = new AttachmentSweeper({
        db: server.ctx.store.db,
        blobs: new StoreBlobStore(server.ctx.store.db),
        unsentTtlMs: TTL_MS,
        orphanGraceMs: GRACE_MS,
        onDeleted: (what, count) => {
          deleted[what] += count;
        },
      });
    });
    after(() => server.close());

    /** The sweep's batches at the injected time `at`, until no work is left. */
    async function sweepAt(at: number): Promise<void> {
      while ((await sweeper.runBatch(at)).more);
    }

    const chunksOf = async (attachmentId: string, blobKey?: string) => {
      const key =
        blobKey ??
        (
          await server.ctx.store.db
            .selectFrom('attachments')
            .select('blob_key')
            .where('id', '=', attachmentId)
            .executeTakeFirst()
        )?.blob_key;
      if (!key) return 0;
      return (
        await server.ctx.store.db
          .selectFrom('attachment_blob_chunks')
          .select('seq')
          .where('blob_key', '=', key)
          .execute()
      ).length;
    };
    const blobKeyOf = async (attachmentId: string) =>
      (
        await server.ctx.store.db
          .selectFrom('attachments')
          .select('blob_key')
          .where('id', '=', attachmentId)
          .executeTakeFirstOrThrow()
      ).blob_key;
    const upload = async (v: Visitor, conversationId: string, name: string) => {
      const res = await sdkUpload(
        server,
        v,
        conversationId,
        fileForm(Buffer.from(`${name} bytes`), name, 'text/plain'),
      );
      assert.equal(res.status, 201, res.text);
      return res.body as { id: string; url: string };
    };
    const post = (conversationId: string, attachmentId: string) =>
      http(
        `${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`,
        bearer(token, { blocks: [{ type: 'attachment', attachment_id: attachmentId }] }),
      );

    it('deletes an upload no message named in time, with its bytes; one sent in a message stays', async () => {
      const v = newVisitor(companyId);
      const conversation = await createConversation(server, v);
      const sent = await upload(v, conversation.id, 'sent.txt');
      assert.equal((await post(conversation.id, sent.id)).status, 201);
      const unsent = await upload(v, conversation.id, 'unsent.txt');
      const unsentKey = await blobKeyOf(unsent.id);
      const before = { ...deleted };

      await sweepAt(Date.now() + TTL_MS / 2);
      assert.equal(await chunksOf(unsent.id), 1, 'too young to go');

      await sweepAt(Date.now() + TTL_MS + GRACE_MS + 1000);
      const rows = await server.ctx.store.db
        .selectFrom('attachments')
        .select('id')
        .where('conversation_id', '=', conversation.id)
        .execute();
      assert.deepEqual(
        rows.map((r) => r.id),
        [sent.id],
      );
      assert.equal(await chunksOf('', unsentKey), 0, 'its bytes are gone');
      assert.equal(deleted.unsent_attachment - before.unsent_attachment, 1);
      assert.equal(deleted.unowned_blob - before.unowned_blob, 1);
      const kept = await download(sent.url);
      assert.equal(kept.status, 200);
      assert.equal(kept.bytes.toString(), 'sent.txt bytes');
      // A message naming the swept upload is refused like any unknown one.
      const late = await post(conversation.id, unsent.id);
      assert.equal(late.status, 400, late.text);
      assert.equal(late.body.code, 'unknown_attachment');
    });

    it('leaves an upload alone while a message naming it is being sent (claimed), and takes it once the claim is old', async () => {
      const v = newVisitor(companyId);
      const conversation = await createConversation(server, v);
      const pending = await upload(v, conversation.id, 'pending.txt');
      // The first half of a send: the blocks are resolved (and claimed); the message is not stored yet.
      const found = await server.ctx.webchat.commands.find(companyId, conversation.id);
      await server.ctx.webchat.attachments.blocksOf(found, [
        { type: 'attachment', attachment_id: pending.id },
      ]);

      await sweepAt(Date.now() + TTL_MS + GRACE_MS + 1000);
      assert.equal(await chunksOf(pending.id), 1, 'claimed: kept');

      await sweepAt(Date.now() + CLAIM_MS + 1000);
      assert.equal(await chunksOf(pending.id), 0, 'never stored in a message: gone once the claim is old');
    });

    it("deletes the bytes of a deleted conversation's attachments, but never those of an upload still streaming", async () => {
      const v = newVisitor(companyId);
      const conversation = await createConversation(server, v);
      const file = await upload(v, conversation.id, 'doomed.txt');
      assert.equal((await post(conversation.id, file.id)).status, 201);
      const key = await blobKeyOf(file.id);
      // Whatever deletes a conversation, its attachment rows go with it (ON DELETE CASCADE).
      await server.ctx.store.db.deleteFrom('conversations').where('id', '=', conversation.id).execute();
      // A blob being written right now has no row yet.
      const streaming = randomUUID();
      await new StoreBlobStore(server.ctx.store.db).put(
        streaming,
        Readable.from([Buffer.from('half an upload')]),
      );

      await sweepAt(Date.now());
      assert.equal(await chunksOf('', key), 1, 'younger than the grace: kept for now');
      await sweepAt(Date.now() + GRACE_MS + 1000);
      assert.equal(await chunksOf('', key), 0, "the deleted conversation's bytes are gone");
      assert.equal(await chunksOf('', streaming), 0, 'an abandoned write is gone too once it is old');
    });

    it('is scheduled by the server: its row appears in scheduled_jobs and a run is counted', async () => {
      const row = await waitFor('the server to run the sweep once', () =>
        server.ctx.store.db
          .selectFrom('scheduled_jobs')
          .selectAll()
          .where('name', '=', 'attachments.sweep')
          .where('last_outcome', '=', 'completed')
          .executeTakeFirst(),
      );
      assert.ok(row.last_run_ms !== null);
      const runs = (await server.ctx.metrics.registry.getSingleMetric('parley_job_runs_total')!.get()).values;
      assert.ok(runs.some((r) => r.labels.job === 'attachments.sweep' && r.value >= 1));
    });
  });
}
