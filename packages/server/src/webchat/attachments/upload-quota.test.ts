import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { HttpResult } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { fileForm, sdkUpload } from '@parley/testing/webchat/attachment-fixtures';
import { createConversation, newVisitor, type Visitor } from '@parley/testing/webchat/webchat-fixtures';

/** The quotas of this file's server: a few KiB, so a handful of small uploads reach them. */
const SESSION_QUOTA = 3000;
const ADDRESS_QUOTA = 6000;

// Memory limiter on SQLite, Redis limiter (shared by every node) on PostgreSQL.
const setups = [
  { name: 'memory limiter, sqlite', database: 'sqlite' as const, redis: false },
  { name: 'redis limiter, postgres', database: 'postgres' as const, redis: true },
];

function assertQuotaRefusal(res: HttpResult | { status: number; body: string }): void {
  assert.equal(res.status, 429, typeof res.body === 'string' ? res.body : JSON.stringify(res.body));
  const body = typeof res.body === 'string' ? JSON.parse(res.body) : res.body;
  assert.equal(body.code, 'rate_limited');
  assert.match(body.detail, /upload bytes/);
}

for (const setup of setups) {
  describe(`upload quotas: bytes per hour per session and per address (${setup.name})`, () => {
    let server: TestServer;
    let companyId: string;
    let addresses = 0;
    // trustProxy: each test speaks from its own client address through X-Forwarded-For.
    const freshAddress = () => `198.51.100.${++addresses}`;
    const visitorAt = (address: string): Visitor => {
      const v = newVisitor(companyId);
      v.headers['x-forwarded-for'] = address;
      return v;
    };
    const text = (bytes: number) => fileForm(Buffer.alloc(bytes, 'q'), 'q.txt', 'text/plain');
    const storedChunks = async () =>
      (await server.ctx.store.db.selectFrom('attachment_blob_chunks').select('seq').execute()).length;

    before(async () => {
      server = await startTestServer({
        database: setup.database,
        redis: setup.redis,
        config: {
          trustProxy: true,
          webchat: {
            uploadBytesPerHourPerSession: SESSION_QUOTA,
            uploadBytesPerHourPerIp: ADDRESS_QUOTA,
            uploadsPerMinutePerSession: 1000,
            uploadsPerMinutePerIp: 1000,
          },
          rateLimit: { keyPrefix: `parley-test:${randomBytes(6).toString('hex')}:` },
        },
      });
      companyId = (await server.ctx.companies.create('Quota Co')).id;
    });
    after(() => server.close());

    it("refuses a session's upload past its quota with 429 and Retry-After, keeping nothing; another session goes on", async () => {
      const address = freshAddress();
      const v = visitorAt(address);
      const conversation = await createConversation(server, v);
      assert.equal((await sdkUpload(server, v, conversation.id, text(1400))).status, 201);
      assert.equal((await sdkUpload(server, v, conversation.id, text(1400))).status, 201);
      const chunks = await storedChunks();
      const refused = await sdkUpload(server, v, conversation.id, text(1400));
      assertQuotaRefusal(refused);
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(retryAfter > 3000 && retryAfter <= 3600, `Retry-After ${retryAfter} s: the rest of the hour`);
      assert.equal(await storedChunks(), chunks, 'the refused upload stored nothing');

      const other = visitorAt(address);
      const elsewhere = await createConversation(server, other);
      assert.equal((await sdkUpload(server, other, elsewhere.id, text(1400))).status, 201);
    });

    it('counts every session of one address against the address quota; another address is not affected', async () => {
      const address = freshAddress();
      let accepted = 0;
      let refusal: HttpResult | undefined;
      for (let i = 0; i < 6 && !refusal; i++) {
        const v = visitorAt(address);
        const res = await sdkUpload(server, v, (await createConversation(server, v)).id, text(1400));
        if (res.status === 201) accepted++;
        else refusal = res;
      }
      assert.equal(accepted, 4, '4 × 1400 bytes fit in 6000, a fifth does not');
      assertQuotaRefusal(refusal!);
      const v = visitorAt(freshAddress());
      assert.equal(
        (await sdkUpload(server, v, (await createConversation(server, v)).id, text(1400))).status,
        201,
      );
    });

    it('counts the bytes of an upload without a length as they stream, and refuses it once past the quota', async () => {
      const v = visitorAt(freshAddress());
      const conversation = await createConversation(server, v);
      const chunks = await storedChunks();
      // 600 KiB without Content-Length: admitted (the quota has room), refused while streaming.
      const outcome = await chunkedUpload(server, v, conversation.id, 600 * 1024);
      assertQuotaRefusal(outcome);
      assert.equal(await storedChunks(), chunks, 'nothing of it kept');
      // The quota is used up now: even a tiny upload waits for the hour to end.
      assertQuotaRefusal(await sdkUpload(server, v, conversation.id, text(10)));
    });
  });
}

/** A multipart upload of `total` bytes of text with chunked transfer encoding, written until the server answers. */
function chunkedUpload(
  server: TestServer,
  v: Visitor,
  conversationId: string,
  total: number,
): Promise<{ status: number; body: string }> {
  const boundary = 'parley-quota-boundary';
  const url = new URL(`${server.baseUrl}/sdk/v1/conversations/${conversationId}/attachments`);
  const chunk = Buffer.alloc(16 * 1024, 'q');
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
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString() }));
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="q.txt"\r\nContent-Type: text/plain\r\n\r\n`,
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
