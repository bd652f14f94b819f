import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type HttpResult, http } from '@parley/testing/http-client';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';
import { createConversation, fetchPlatformToken, newVisitor } from '@parley/testing/webchat/webchat-fixtures';
import { sql } from 'kysely';

/**
 * docs/design.md "Idempotency keys": `Idempotency-Key` on the platform's and the portal inbox's message posts. A
 * repeat within 24 h (same key, same company) answers the first answer and posts nothing; the same key with another
 * request is 422; concurrent duplicates post once; expired keys are pruned.
 */
for (const database of TEST_DATABASES) {
  describe(`Idempotency-Key on message posts (${database})`, () => {
    let server: TestServer;
    let acme: PortalTestClient;
    let acmeId: string;
    let globexId: string;
    let acmeToken: string;
    let globexToken: string;
    before(async () => {
      ({ server, acme, acmeId, globexId } = await startPortalWorld(database));
      acmeToken = await fetchPlatformToken(server, acmeId, ['conversations:read', 'conversations:write']);
      globexToken = await fetchPlatformToken(server, globexId, ['conversations:read', 'conversations:write']);
    });
    after(() => server.close());

    const conversationOf = async (companyId: string) =>
      (await createConversation(server, newVisitor(companyId))).id;
    const post = (token: string, conversationId: string, text: string, key?: string): Promise<HttpResult> =>
      http(`${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...(key === undefined ? {} : { 'idempotency-key': key }),
        },
        body: JSON.stringify({ blocks: [{ type: 'markdown', content: text }] }),
      });
    /** Agent messages of a conversation as the platform lists them. */
    const agentTexts = async (token: string, conversationId: string): Promise<string[]> => {
      const res = await http(`${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(res.status, 200, res.text);
      return res.body.messages
        .filter((m: { role: string }) => m.role === 'agent')
        .map((m: { blocks: Array<{ content: string }> }) => m.blocks[0]!.content);
    };

    it('answers a repeat with the first answer, status and body, and posts nothing more', async () => {
      const id = await conversationOf(acmeId);
      const key = `retry-${randomUUID()}`;
      const first = await post(acmeToken, id, 'Your order shipped.', key);
      assert.equal(first.status, 201, first.text);
      assert.equal(first.headers.get('idempotent-replayed'), null);
      const again = await post(acmeToken, id, 'Your order shipped.', key);
      assert.equal(again.status, 201);
      assert.equal(again.text, first.text, 'the very same body');
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(await agentTexts(acmeToken, id), ['Your order shipped.']);
      // Without a key every post is a post.
      await post(acmeToken, id, 'Anything else?');
      await post(acmeToken, id, 'Anything else?');
      assert.equal((await agentTexts(acmeToken, id)).length, 3);
    });

    it('refuses the same key for another body or another conversation with 422 idempotency_key_reused', async () => {
      const id = await conversationOf(acmeId);
      const other = await conversationOf(acmeId);
      const key = randomUUID();
      assert.equal((await post(acmeToken, id, 'one', key)).status, 201);
      for (const res of [await post(acmeToken, id, 'two', key), await post(acmeToken, other, 'one', key)]) {
        assert.equal(res.status, 422, res.text);
        assert.equal(res.body.code, 'idempotency_key_reused');
      }
      assert.deepEqual(await agentTexts(acmeToken, id), ['one']);
      assert.deepEqual(await agentTexts(acmeToken, other), []);
    });

    it('keeps keys per company: another company’s identical key is its own', async () => {
      const key = 'shared-key';
      const mine = await conversationOf(acmeId);
      const theirs = await conversationOf(globexId);
      assert.equal((await post(acmeToken, mine, 'hello', key)).status, 201);
      assert.equal((await post(globexToken, theirs, 'hello', key)).status, 201);
      assert.deepEqual(await agentTexts(globexToken, theirs), ['hello']);
    });

    it('posts once when duplicates arrive at the same time; every one gets the same answer', async () => {
      const id = await conversationOf(acmeId);
      const key = randomUUID();
      const answers = await Promise.all(Array.from({ length: 8 }, () => post(acmeToken, id, 'at once', key)));
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(8).fill(201),
        answers.map((a) => a.text).join('\n'),
      );
      assert.equal(new Set(answers.map((a) => a.body.id)).size, 1);
      assert.deepEqual(await agentTexts(acmeToken, id), ['at once']);
    });

    it('replays a refusal too: the first answer of a post to a closed conversation', async () => {
      const id = await conversationOf(acmeId);
      const closed = await http(`${server.baseUrl}/platform/v1/conversations/${id}/close`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acmeToken}` },
      });
      assert.equal(closed.status, 200, closed.text);
      const key = randomUUID();
      const first = await post(acmeToken, id, 'too late', key);
      assert.equal(first.status, 409);
      const again = await post(acmeToken, id, 'too late', key);
      assert.equal(again.status, 409);
      assert.equal(again.text, first.text);
      assert.match(again.headers.get('content-type') ?? '', /^application\/problem\+json/);
    });

    it('releases the key after a failure on our side: the retry posts', async () => {
      const id = await conversationOf(acmeId);
      const db = server.ctx.store.db;
      // The store refuses this conversation's messages (as a full disk would): the post fails with a 5xx.
      if (database === 'sqlite') {
        await sql`create trigger refuse_messages before insert on messages when new.conversation_id = ${sql.lit(id)}
          begin select raise(abort, 'refused'); end`.execute(db);
      } else {
        await sql`create function refuse_messages() returns trigger language plpgsql as
          $$ begin raise exception 'refused'; end $$`.execute(db);
        await sql`create trigger refuse_messages before insert on messages for each row
          when (new.conversation_id = ${sql.lit(id)}) execute function refuse_messages()`.execute(db);
      }
      const key = randomUUID();
      try {
        const failed = await post(acmeToken, id, 'after the outage', key);
        assert.ok(failed.status >= 500, failed.text);
      } finally {
        await sql`drop trigger refuse_messages${database === 'sqlite' ? sql`` : sql` on messages`}`.execute(
          db,
        );
        if (database === 'postgres') await sql`drop function refuse_messages()`.execute(db);
      }
      const retried = await post(acmeToken, id, 'after the outage', key);
      assert.equal(retried.status, 201, retried.text);
      assert.equal(retried.headers.get('idempotent-replayed'), null, 'run anew, not replayed');
      assert.deepEqual(await agentTexts(acmeToken, id), ['after the outage']);
    });

    it('refuses a key that is empty, too long or not visible ASCII with 400 validation_failed, posting nothing', async () => {
      const id = await conversationOf(acmeId);
      for (const key of ['', 'x'.repeat(256), 'two words', 'caf\u00e9']) {
        const res = await post(acmeToken, id, 'bad key', key);
        assert.equal(res.status, 400, `${JSON.stringify(key)}: ${res.text}`);
        assert.equal(res.body.code, 'validation_failed');
        assert.equal(res.body.errors[0].field, 'idempotency-key');
      }
      assert.equal((await post(acmeToken, id, 'longest key', 'k'.repeat(255))).status, 201);
      assert.deepEqual(await agentTexts(acmeToken, id), ['longest key']);
    });

    it('forgets a key after 24 h: the row is pruned and the key posts anew', async () => {
      const id = await conversationOf(acmeId);
      const key = randomUUID();
      assert.equal((await post(acmeToken, id, 'yesterday', key)).status, 201);
      // A day later: the key's row is moved back 25 hours.
      const dayAgo = Date.now() - 25 * 60 * 60 * 1000;
      await server.ctx.store.db
        .updateTable('idempotency_keys')
        .set({ created_ms: dayAgo, claimed_ms: dayAgo })
        .where('idempotency_key', '=', key)
        .execute();
      assert.equal((await post(acmeToken, id, 'today', key)).status, 201, 'an expired key is no repeat');
      assert.deepEqual(await agentTexts(acmeToken, id), ['yesterday', 'today']);
      // The sweep deletes expired rows.
      const old = randomUUID();
      await server.ctx.store.db
        .insertInto('idempotency_keys')
        .values({
          company_id: acmeId,
          idempotency_key: old,
          fingerprint: 'x',
          created_ms: dayAgo,
          claimed_ms: dayAgo,
          status_code: 201,
          content_type: 'application/json',
          response_body: '{}',
        })
        .execute();
      assert.ok((await server.ctx.webchat.idempotency.prune()) >= 1);
      const left = await server.ctx.store.db
        .selectFrom('idempotency_keys')
        .select('idempotency_key')
        .where('idempotency_key', '=', old)
        .execute();
      assert.deepEqual(left, []);
    });

    it('does the same on the portal inbox’s reply, one module for both routes', async () => {
      const id = await conversationOf(acmeId);
      const key = randomUUID();
      const reply = (text: string) =>
        acme.post(
          `/inbox/conversations/${id}/messages`,
          { content: text },
          { headers: { 'idempotency-key': key } },
        );
      const first = await reply('Happy to help.');
      assert.equal(first.status, 201, first.text);
      const again = await reply('Happy to help.');
      assert.equal(again.text, first.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal((await reply('Something else')).status, 422);
      assert.deepEqual(await agentTexts(acmeToken, id), ['Happy to help.']);
      // The same key on the platform route is another request: refused, not replayed.
      assert.equal((await post(acmeToken, id, 'Happy to help.', key)).status, 422);
    });
  });
}
