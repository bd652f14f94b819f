import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { download, fileForm, PDF, pngOf, sdkUpload } from '@parley/testing/webchat/attachment-fixtures';
import { createConversation, newVisitor, type Visitor } from '@parley/testing/webchat/webchat-fixtures';
import { AttachmentLinks, LINK_TTL_SECONDS } from './attachment-links.ts';

const HOUR_MS = LINK_TTL_SECONDS * 1000;

describe('signed links expire (injected clock)', () => {
  it('verifies until the hour is over, never after, and never for another id', async () => {
    const server = await startTestServer();
    try {
      let now = Date.parse('2026-11-24T10:00:00Z');
      const links = new AttachmentLinks(server.ctx.sealer, () => now);
      const id = '11111111-2222-4333-8444-555555555555';
      const query = Object.fromEntries(new URL(`http://x${links.pathFor(id)}`).searchParams);
      now += HOUR_MS - 1000;
      assert.equal(links.verify(id, query), true);
      assert.equal(links.verify('11111111-2222-4333-8444-555555555556', query), false);
      now += 2000;
      assert.equal(links.verify(id, query), false);
      assert.equal(links.verify(id, { ...query, expires: String(Number(query.expires) + 3600) }), false);
    } finally {
      await server.close();
    }
  });
});

describe('uploads are rate limited per visitor session', () => {
  it('answers 429 rate_limited with Retry-After past the limit, and stores nothing more', async () => {
    const server = await startTestServer({ config: { webchat: { uploadsPerMinutePerSession: 2 } } });
    try {
      const company = await server.ctx.companies.create('Flood Co');
      const v = newVisitor(company.id);
      const conversation = await createConversation(server, v);
      const upload = () => sdkUpload(server, v, conversation.id, fileForm(pngOf(), 'a.png', 'image/png'));
      assert.equal((await upload()).status, 201);
      assert.equal((await upload()).status, 201);
      const refused = await upload();
      assert.equal(refused.status, 429);
      assert.equal(refused.body.code, 'rate_limited');
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
      const stored = await server.ctx.store.db.selectFrom('attachments').select('id').execute();
      assert.equal(stored.length, 2);
      // Another session of the same IP still may (the per-IP limit is higher).
      const other = newVisitor(company.id);
      const own = await createConversation(server, other);
      assert.equal(
        (await sdkUpload(server, other, own.id, fileForm(pngOf(), 'b.png', 'image/png'))).status,
        201,
      );
    } finally {
      await server.close();
    }
  });
});

for (const database of TEST_DATABASES) {
  describe(`attachments security (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    let v: Visitor;
    let conversationId: string;
    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('Secure Co')).id;
      const settings = await server.ctx.webchat.attachments.settingsFor(companyId);
      // Even with SVG allowed, an SVG may never pass as a PNG.
      await server.ctx.webchat.attachments.updateSettings(companyId, {
        ...settings,
        allowedTypes: [...settings.allowedTypes, 'image/svg+xml'],
      });
      v = newVisitor(companyId);
      conversationId = (await createConversation(server, v)).id;
    });
    after(() => server.close());

    it('HTML or SVG declared as image/png is 415, and HTML is never stored under any declared type', async () => {
      const html = Buffer.from(
        '<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>',
      );
      const svg = Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>',
      );
      const cases: Array<[Buffer, string, string]> = [
        [html, 'cat.png', 'image/png'],
        [svg, 'cat.png', 'image/png'],
        [html, 'page.html', 'text/html'],
        [html, 'notes.txt', 'text/plain'],
        [Buffer.from('  <script>fetch("/x")</script>'), 'notes.txt', 'text/plain'],
        [html, 'x', 'application/octet-stream'],
        [pngOf(), 'cat.svg', 'image/svg+xml'],
      ];
      for (const [bytes, name, type] of cases) {
        const res = await sdkUpload(server, v, conversationId, fileForm(bytes, name, type));
        assert.equal(res.status, 415, `${name} as ${type}: ${res.text}`);
        assert.equal(res.body.code, 'attachment_type_not_allowed');
      }
      const stored = await server.ctx.store.db.selectFrom('attachments').select('id').execute();
      assert.equal(stored.length, 0);
      const chunks = await server.ctx.store.db.selectFrom('attachment_blob_chunks').select('seq').execute();
      assert.equal(chunks.length, 0, 'nothing of a refused file is kept');
    });

    it('a link replayed after its hour, or re-pointed at another attachment, is 403 attachment_link_invalid', async () => {
      const png = await sdkUpload(server, v, conversationId, fileForm(pngOf(), 'a.png', 'image/png'));
      const pdf = await sdkUpload(server, v, conversationId, fileForm(PDF, 'b.pdf', 'application/pdf'));
      assert.equal(png.status, 201);
      // A link the server signed an hour and a second ago (same key material, clock injected): expired now.
      const issuedLongAgo = new AttachmentLinks(server.ctx.sealer, () => Date.now() - HOUR_MS - 1000);
      const expired = `${server.baseUrl}${issuedLongAgo.pathFor(png.body.id)}`;
      const replay = await http(expired);
      assert.equal(replay.status, 403);
      assert.equal(replay.body.code, 'attachment_link_invalid');
      assert.match(replay.headers.get('content-type') ?? '', /application\/problem\+json/);
      // The same signer with the real clock works: it is the expiry that is refused, nothing else.
      const fresh = new AttachmentLinks(server.ctx.sealer);
      assert.equal((await download(`${server.baseUrl}${fresh.pathFor(png.body.id)}`)).status, 200);

      const pngUrl = new URL(png.body.url);
      const moved = new URL(pngUrl);
      moved.pathname = moved.pathname.replace(png.body.id, pdf.body.id);
      const res = await http(moved.href);
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'attachment_link_invalid');
      const extended = new URL(pngUrl);
      extended.searchParams.set('expires', String(Number(pngUrl.searchParams.get('expires')) + 86_400));
      assert.equal((await http(extended.href)).status, 403);
    });

    it('path-traversal and control-character file names are cleaned, never used as a path', async () => {
      const filesBefore = readdirSync(server.dataDir).sort();
      const cases: Array<[string, string]> = [
        ['../../../../etc/passwd.png', 'passwd.png'],
        ['..\\..\\windows\\system32\\evil.png', 'evil.png'],
        ['..', 'image.png'],
        ['/', 'image.png'],
        ['.htaccess.png', 'htaccess.png'],
        ['inv\u0000oice\u001b[31m.png', 'invoice[31m.png'],
        ['photo\u202egnp.exe', 'photognp.exe'],
        // (FormData itself percent-encodes `"` in a file name, so quotes are the Content-Disposition test's.)
        ['a<b>c:d|e?f*.png', 'a_b_c_d_e_f_.png'],
        [`${'x'.repeat(500)}.png`, `${'x'.repeat(196)}.png`],
      ];
      for (const [raw, expected] of cases) {
        const form = new FormData();
        form.append('file', new Blob([Uint8Array.from(pngOf())], { type: 'image/png' }), raw);
        const res = await sdkUpload(server, v, conversationId, form);
        assert.equal(res.status, 201, `${JSON.stringify(raw)}: ${res.text}`);
        assert.equal(res.body.name, expected, JSON.stringify(raw));
        const got = await download(res.body.url);
        const disposition = got.headers.get('content-disposition') ?? '';
        assert.ok(
          [...disposition].every((c) => c.charCodeAt(0) > 0x1f && c.charCodeAt(0) !== 0x7f),
          JSON.stringify(disposition),
        );
        assert.ok(!disposition.includes('/') && !disposition.includes('\\'), disposition);
      }
      const keys = await server.ctx.store.db.selectFrom('attachments').select(['blob_key', 'name']).execute();
      for (const { blob_key } of keys) assert.match(blob_key, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        readdirSync(server.dataDir).sort(),
        filesBefore,
        'no file was written to the data folder',
      );
    });

    it('an oversize body streamed without Content-Length is refused while streaming, without buffering', async () => {
      const company = (await server.ctx.companies.create('Tiny Co')).id;
      await server.ctx.webchat.attachments.updateSettings(company, {
        maxAttachmentBytes: 1024 * 1024,
        allowedTypes: ['text/plain'],
      });
      const tiny = newVisitor(company);
      const conversation = await createConversation(server, tiny);
      const chunksBefore = (
        await server.ctx.store.db.selectFrom('attachment_blob_chunks').select('seq').execute()
      ).length;
      const total = 256 * 1024 * 1024;
      const rssBefore = process.memoryUsage().rss;
      let peakRss = rssBefore;
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
      }, 5);
      try {
        const outcome = await streamUpload(server, tiny, conversation.id, total);
        assert.equal(outcome.status, 413, outcome.body);
        assert.equal(JSON.parse(outcome.body).code, 'attachment_too_large');
        console.log(`oversize upload: refused after ${(outcome.sent / 1024 / 1024).toFixed(1)} MiB sent`);
        assert.ok(outcome.sent < total / 4, `refused after ${outcome.sent} bytes, before the body ended`);
      } finally {
        clearInterval(sampler);
      }
      const growthMiB = (peakRss - rssBefore) / 1024 / 1024;
      console.log(`oversize upload: peak RSS growth ${growthMiB.toFixed(1)} MiB`);
      assert.ok(growthMiB < 48, `memory grew by ${growthMiB.toFixed(1)} MiB for a 256 MiB upload`);
      const chunksAfter = (
        await server.ctx.store.db.selectFrom('attachment_blob_chunks').select('seq').execute()
      ).length;
      assert.equal(chunksAfter, chunksBefore, 'the refused upload left no chunk behind');
    });
  });
}

/**
 * Streams a multipart upload of `total` bytes of text with chunked transfer encoding (no Content-Length, so only
 * the streaming check can stop it), writing with backpressure until the server answers or closes.
 */
function streamUpload(
  server: TestServer,
  v: Visitor,
  conversationId: string,
  total: number,
): Promise<{ status: number; body: string; sent: number }> {
  const boundary = 'parley-security-boundary';
  const url = new URL(`${server.baseUrl}/sdk/v1/conversations/${conversationId}/attachments`);
  const chunk = Buffer.alloc(64 * 1024, 'a');
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = httpRequest(url, {
      method: 'POST',
      headers: { ...v.headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString(), sent }),
      );
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
    );
    const pump = () => {
      while (!answered && !req.destroyed && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered && !req.destroyed) req.end(`\r\n--${boundary}--\r\n`);
    };
    pump();
  });
}
