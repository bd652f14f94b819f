import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { pngOf } from '@parley/testing/webchat/attachment-fixtures';
import { TestWebchats, waitFor } from './testing/harness.ts';
import type { UploadProgress } from './uploads.ts';

for (const database of TEST_DATABASES) {
  describe(`SDK attachments against a real server (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    const webchats = new TestWebchats(() => ({ baseUrl: server.baseUrl, companyId }));
    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('Acme')).id;
    });
    after(async () => {
      webchats.closeAll();
      await server.close();
    });

    test('uploadAttachment reports real progress and answers the attachment; send carries it', async () => {
      const chat = await webchats.start();
      // Half a MiB behind a PNG signature (the server sniffs the signature), so the body goes out in many chunks.
      const png = Buffer.concat([pngOf(), randomBytes(512 * 1024)]);
      const progress: UploadProgress[] = [];
      const attachment = await chat.uploadAttachment(
        new Blob([Uint8Array.from(png)], { type: 'image/png' }),
        {
          name: 'shot.png',
          onProgress: (p) => progress.push(p),
        },
      );
      assert.equal(attachment.name, 'shot.png');
      assert.equal(attachment.content_type, 'image/png');
      assert.equal(attachment.size, png.length);
      assert.ok(progress.length >= 2, `progress reported ${progress.length} times`);
      const last = progress.at(-1)!;
      assert.equal(last.loaded, last.total);
      assert.ok(last.total > png.length, 'progress counts the whole multipart body');
      assert.ok(progress.every((p, i) => i === 0 || p.loaded >= progress[i - 1]!.loaded));

      await chat.send('', { attachments: [attachment] });
      const mine = await waitFor('the stored attachment message', () =>
        chat.messages.find((m) => m.role === 'user' && m.status === 'complete'),
      );
      const block = mine.blocks[0] as { type: string; attachment_id: string; url: string };
      assert.equal(block.type, 'attachment');
      assert.equal(block.attachment_id, attachment.id);
      const res = await fetch(block.url);
      assert.equal(res.status, 200);
      assert.equal(Buffer.from(await res.arrayBuffer()).length, png.length);
    });

    test('a refused upload rejects with the server’s problem code', async () => {
      const chat = await webchats.start();
      const html = new Blob(['<html><script>alert(1)</script></html>'], { type: 'image/png' });
      await assert.rejects(
        chat.uploadAttachment(html, { name: 'x.png' }),
        (err: { code: string; problemCode: string; status: number }) => {
          assert.equal(err.code, 'http_error');
          assert.equal(err.status, 415);
          assert.equal(err.problemCode, 'attachment_type_not_allowed');
          return true;
        },
      );
      await assert.rejects(chat.send('  '), (err: { code: string }) => err.code === 'empty_message');
    });
  });
}
