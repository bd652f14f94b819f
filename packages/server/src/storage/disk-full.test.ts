import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { canMountTmpfs, mountTmpfs, type Tmpfs } from '@parley/testing/tmpfs';
import {
  connectToNewConversation,
  newVisitor,
  sdkPost,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { type Kysely, sql } from 'kysely';
import { dependencyUnavailable } from '../errors/unavailable.ts';
import { openStore, type Store } from './database.ts';
import type { Database } from './schema.ts';
import { isStoreUnavailable } from './store-errors.ts';

// A full disk. In the store layer SQLite's `max_page_count` caps the database file: once every page is used SQLite
// answers SQLITE_FULL as on a file system without space, and for a statement without a statement journal rolls the
// whole transaction back itself. At the boundaries a real tmpfs fills up (as in the fault suite's disk-full-sqlite
// scenario).

/** SQLite's default limit: the database may grow again. */
const NO_LIMIT = 1_073_741_823;

/** Caps the database at its current size and fills every page, so the next write that needs a page fails. */
async function fillDisk(db: Kysely<Database>): Promise<void> {
  await sql`create table if not exists disk_filler (v blob)`.execute(db);
  const { page_count } = (await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0]!;
  await sql.raw(`pragma max_page_count = ${page_count + 4}`).execute(db);
  for (const size of [4096, 1024, 256, 64, 16, 1]) {
    for (;;) {
      const full = await sql`insert into disk_filler (v) values (zeroblob(${size}))`.execute(db).then(
        () => false,
        (err: { code?: string }) => err.code === 'SQLITE_FULL',
      );
      if (full) break;
    }
  }
}

/** Frees the space again: the filler goes and the database may grow. */
async function freeDisk(db: Kysely<Database>): Promise<void> {
  await sql.raw(`pragma max_page_count = ${NO_LIMIT}`).execute(db);
  await sql`drop table if exists disk_filler`.execute(db);
}

describe('a full disk under SQLite', () => {
  describe('store layer', () => {
    let dir: string;
    let store: Store;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'parley-disk-full-'));
      store = await openStore({ dataDir: dir });
      await sql`create table probe (id text primary key, v blob)`.execute(store.db);
    });
    after(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const bigRow = (trx: Kysely<Database>) =>
      sql`insert into probe (id, v) values (${randomUUID()}, zeroblob(20000))`.execute(trx);

    it('a transaction fails with SQLITE_FULL, its cause, even after SQLite rolled it back itself', async () => {
      await fillDisk(store.db);
      try {
        const error = await store.db
          .transaction()
          .execute(bigRow)
          .then(
            () => undefined,
            (err: unknown) => err,
          );
        assert.equal((error as { code?: string }).code, 'SQLITE_FULL', String(error));
        assert.ok(isStoreUnavailable(error));
        assert.equal(dependencyUnavailable(error)?.code, 'store_unavailable');
      } finally {
        await freeDisk(store.db);
      }
      await store.db.transaction().execute(bigRow);
    });

    it('every write of a shared commit fails with the cause, and none of them is stored', async () => {
      await fillDisk(store.db);
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      let outcomes: PromiseSettledResult<unknown>[];
      try {
        outcomes = await Promise.allSettled([
          store.writes.run((trx) => sql`insert into probe (id) values (${ids[0]})`.execute(trx)),
          store.writes.run(async (trx) => {
            await sql`insert into probe (id) values (${ids[1]})`.execute(trx);
            await bigRow(trx);
          }),
          store.writes.run((trx) => sql`insert into probe (id) values (${ids[2]})`.execute(trx)),
        ]);
      } finally {
        await freeDisk(store.db);
      }
      for (const outcome of outcomes) {
        assert.equal(outcome.status, 'rejected');
        const reason = (outcome as PromiseRejectedResult).reason;
        assert.ok(isStoreUnavailable(reason), `a 503, not a 500: ${String(reason)}`);
      }
      const stored = await sql<{ id: string }>`select id from probe where id in (${sql.join(ids)})`.execute(
        store.db,
      );
      assert.deepEqual(stored.rows, [], 'all or nothing: the shared transaction was rolled back');
    });
  });

  // A real file system that fills up: SQLite then fails at COMMIT, when the log cannot grow, and rolls the
  // transaction back itself (what made a full disk a 500 before, the ROLLBACK after its own hiding the cause).
  describe('at the boundaries, on a tmpfs that fills up', {
    skip: !canMountTmpfs() && 'mounting a tmpfs needs root',
  }, () => {
    let server: TestServer;
    let disk: Tmpfs;
    before(async () => {
      disk = mountTmpfs(16, 'parley-disk-full-');
      server = await startTestServer({ database: 'sqlite', config: { dataDir: join(disk.dir, 'data') } });
    });
    after(async () => {
      await server?.close();
      disk?.unmount();
    });

    it('answers REST writes 503 store_unavailable with Retry-After and publishes 503 temporary; nothing acknowledged is lost', async () => {
      const company = await server.ctx.companies.create('Full Disk Co');
      const visitor = newVisitor(company.id);
      const { conversation, c } = await connectToNewConversation(server, visitor);
      const acknowledged: string[] = [];
      const send = async (text: string) => {
        const id = randomUUID();
        await sendMessage(c.sub, text, id);
        acknowledged.push(id);
      };
      try {
        await send('before the disk filled up');
        disk.fill();
        // Space SQLite already holds (a page with room, a log it reuses) may take a write or two: go on until one fails.
        let refusedRest: Awaited<ReturnType<typeof sdkPost>> | undefined;
        let refusedPublish: unknown;
        try {
          for (let i = 0; i < 100 && !refusedRest; i++) {
            const res = await sdkPost(server, newVisitor(company.id), '/conversations');
            if (res.status !== 201) refusedRest = res;
          }
          for (let i = 0; i < 100 && !refusedPublish; i++) {
            refusedPublish = await send(`${i} ${'x'.repeat(3000)}`).then(
              () => undefined,
              (err: unknown) => err,
            );
          }
        } finally {
          disk.free();
        }
        assert.ok(refusedRest, 'the disk filled up under the REST writes');
        assert.equal(refusedRest.status, 503, refusedRest.text);
        assert.equal(refusedRest.body.code, 'store_unavailable');
        assert.ok(Number(refusedRest.headers.get('retry-after')) > 0);
        const { code, temporary } = refusedPublish as { code?: number; temporary?: boolean };
        assert.deepEqual({ code, temporary }, { code: 503, temporary: true }, JSON.stringify(refusedPublish));
        await send('after space was freed');
        const stored = await server.ctx.store.db
          .selectFrom('messages')
          .select('client_message_id')
          .where('conversation_id', '=', conversation.id)
          .where('role', '=', 'user')
          .execute();
        assert.deepEqual(
          new Set(stored.map((r) => r.client_message_id)),
          new Set(acknowledged),
          'every acknowledged message is stored, the refused one is not',
        );
        assert.equal((await sdkPost(server, newVisitor(company.id), '/conversations')).status, 201);
      } finally {
        c.close();
      }
    });
  });
});
