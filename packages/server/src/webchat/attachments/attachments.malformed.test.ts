import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { download, rawSdkUpload } from '@parley/testing/webchat/attachment-fixtures';
import { createConversation, newVisitor } from '@parley/testing/webchat/webchat-fixtures';

const BOUNDARY = 'parley-malformed-boundary';
const partHead = (disposition = 'filename="notes.txt"') =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; ${disposition}\r\nContent-Type: text/plain\r\n\r\n`;

/** Multipart bodies a client can break, and names it can choose, answered the same on both stores. */
for (const database of TEST_DATABASES) {
  describe(`malformed uploads (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('Malformed Co')).id;
    });
    after(() => server.close());

    const conversation = async () => {
      const v = newVisitor(companyId);
      return { v, id: (await createConversation(server, v)).id };
    };

    it('answers 400 attachment_required to a body that ends inside the file, however large, and keeps nothing', async () => {
      const { v, id } = await conversation();
      const before = await server.ctx.store.db
        .selectFrom('attachment_blob_chunks')
        .select('blob_key')
        .execute();
      // Each body has arrived in full before the handler reads it (one write): busboy has ended and destroyed the
      // part by the time the upload looks at it.
      const bodies = {
        'no closing boundary': `${partHead()}hello`,
        'cut mid-file': `${partHead()}${'a'.repeat(50)}`,
        'cut in the part headers': partHead().slice(0, 40),
        'large, cut mid-file': `${partHead()}${'a'.repeat(300_000)}`,
      };
      for (const [what, body] of Object.entries(bodies)) {
        const res = await rawSdkUpload(server, v, id, Buffer.from(body, 'latin1'), BOUNDARY);
        assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body?.code, 'attachment_required', what);
      }
      const after = await server.ctx.store.db
        .selectFrom('attachment_blob_chunks')
        .select('blob_key')
        .execute();
      assert.equal(after.length, before.length, 'no chunk kept');
      const kept = await server.ctx.store.db
        .selectFrom('attachments')
        .select('id')
        .where('conversation_id', '=', id)
        .execute();
      assert.equal(kept.length, 0);
    });

    it('stores U+FFFD for an unpaired surrogate an RFC 5987 filename* decodes to, and serves the name', async () => {
      const { v, id } = await conversation();
      // UTF-16LE bytes 00 D8 are the lone high surrogate U+D800; the extension stays ASCII in the plain filename.
      const body = Buffer.from(
        `${partHead("filename*=UTF-16LE''%00%D8a%00")}hello\r\n--${BOUNDARY}--\r\n`,
        'latin1',
      );
      const res = await rawSdkUpload(server, v, id, body, BOUNDARY);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body?.name, '\uFFFDa');
      const [row] = await server.ctx.store.db
        .selectFrom('attachments')
        .select('name')
        .where('id', '=', String(res.body?.id))
        .execute();
      assert.equal(row?.name, '\uFFFDa', 'stored the same on both stores');
      const got = await download(String(res.body?.url));
      assert.equal(got.status, 200);
      assert.match(got.headers.get('content-disposition') ?? '', /filename\*=UTF-8''%EF%BF%BDa$/);
    });
  });
}
