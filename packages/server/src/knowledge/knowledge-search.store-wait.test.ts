import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { RETURNS_ARTICLE } from '@parley/testing/knowledge/knowledge-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { isStoreUnavailable } from '../storage/store-errors.ts';
import { waitingForStore } from './knowledge-search.ts';

/** A small pool, quick to fill. */
const POOL_SIZE = 2;

/**
 * Holds every connection of the server's PostgreSQL pool, as a burst of visitor messages does (docs/operations.md
 * "Capacity": the streaming bench on PostgreSQL), until `release`.
 */
async function holdThePool(server: TestServer): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held: Promise<void>[] = [];
  const acquired: Promise<void>[] = [];
  for (let i = 0; i < POOL_SIZE; i++) {
    let got!: () => void;
    acquired.push(new Promise<void>((resolve) => (got = resolve)));
    held.push(
      server.ctx.store.db.connection().execute(async () => {
        got();
        await gate;
      }),
    );
  }
  await Promise.all(acquired);
  return {
    release: async () => {
      release();
      await Promise.all(held);
    },
  };
}

// The replies of digital employees read knowledge (packages/server/src/knowledge/grounding.ts). Under a burst on
// PostgreSQL a read may find the pool full past `storeConnectTimeoutMs`; the streaming bench's replies then ended
// `responder_failed` although their messages were acknowledged. The replies' knowledge waits for the store instead
// (packages/server/src/webchat/webchat.ts).
describe('knowledge read by a reply while the PostgreSQL pool is full', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      database: 'postgres',
      config: { storeConnectTimeoutMs: 100, storePoolSize: POOL_SIZE },
    });
  });
  after(() => server?.close());

  it('waits for a free connection and answers, where the plain read fails', async () => {
    const company = await server.ctx.companies.create(`Pool Co ${randomUUID().slice(0, 6)}`);
    const source = await server.ctx.knowledge.create(
      company.id,
      { kind: 'text', title: 'Returns and refunds', content: RETURNS_ARTICLE },
      { actor: 'test' },
    );
    const question = 'How many days do I have to return a book?';
    const pool = await holdThePool(server);
    let answer: Promise<unknown> | undefined;
    try {
      await assert.rejects(server.ctx.knowledge.search(company.id, question), (err) =>
        isStoreUnavailable(err),
      );
      let metTheWait!: () => void;
      const waited = new Promise<void>((resolve) => (metTheWait = resolve));
      const knowledge = waitingForStore(server.ctx.knowledge, {
        waitMs: 60_000,
        onWaiting: () => metTheWait(),
      });
      answer = Promise.all([knowledge.hasSources(company.id), knowledge.search(company.id, question)]);
      await waited;
    } finally {
      await pool.release();
    }
    const [hasSources, passages] = (await answer) as [boolean, { sourceId: string }[]];
    assert.equal(hasSources, true);
    assert.equal(passages[0]?.sourceId, source.id);
  });
});
