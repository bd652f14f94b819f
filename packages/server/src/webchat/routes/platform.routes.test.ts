import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import {
  bearer,
  createConversation,
  fetchPlatformToken,
  newVisitor,
} from '@parley/testing/webchat/webchat-fixtures';

describe('GET /platform/v1/conversations (paging)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('pages through every conversation of the company once, newest first, and refuses a forged cursor', async () => {
    const company = await server.ctx.companies.create('Paging');
    const other = await server.ctx.companies.create('Other');
    const created: string[] = [];
    for (let i = 0; i < 3; i++) created.push((await createConversation(server, newVisitor(company.id))).id);
    await createConversation(server, newVisitor(other.id));
    const token = await fetchPlatformToken(server, company.id, ['conversations:read']);

    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const query: string = cursor ? `?limit=1&cursor=${encodeURIComponent(cursor)}` : '?limit=1';
      const res = await http(`${server.baseUrl}/platform/v1/conversations${query}`, bearer(token));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.conversations.length <= 1, true, 'limit respected');
      seen.push(...res.body.conversations.map((c: { id: string }) => c.id));
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
    assert.deepEqual(
      [...seen].sort(),
      [...created].sort(),
      'every conversation once, none of another company',
    );

    const forged = await http(
      `${server.baseUrl}/platform/v1/conversations?cursor=not-a-cursor`,
      bearer(token),
    );
    assert.equal(forged.status, 400);
    assert.equal(forged.body.code, 'invalid_cursor');
  });
});
