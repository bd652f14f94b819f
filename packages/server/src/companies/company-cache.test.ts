import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openStore } from '../storage/database.ts';
import { migrateToLatest } from '../storage/migrate.ts';
import { CompaniesService } from './companies.service.ts';
import { CompanyCache } from './company-cache.ts';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

/** A "store" the cache reads through: a value per company, and how often it was read. */
function store(initial: Record<string, string>) {
  const rows = new Map(Object.entries(initial));
  const reads = { count: 0 };
  return {
    rows,
    reads,
    load: (id: string) => async () => {
      reads.count++;
      return rows.get(id);
    },
  };
}

describe('CompanyCache', () => {
  it('answers a second read from memory, and the store again after an invalidation', async () => {
    const cache = new CompanyCache({ capacity: 10, ttlMs: 60_000, mode: 'single' });
    const s = store({ [A]: 'Acme' });
    assert.equal(await cache.get(A, 'company', s.load(A)), 'Acme');
    assert.equal(await cache.get(A, 'company', s.load(A)), 'Acme');
    assert.equal(s.reads.count, 1);
    s.rows.set(A, 'Acme Renamed');
    await cache.invalidate(A);
    assert.equal(await cache.get(A, 'company', s.load(A)), 'Acme Renamed');
    assert.equal(s.reads.count, 2);
  });

  it('does not keep what a read started before an invalidation answered', async () => {
    const cache = new CompanyCache({ capacity: 10, ttlMs: 60_000, mode: 'single' });
    let release: (value: string) => void = () => {};
    // The read is under way (its answer the old row) when the change commits and invalidates.
    const inFlight = cache.get(A, 'company', () => new Promise<string>((resolve) => (release = resolve)));
    await cache.invalidate(A);
    release('old');
    assert.equal(await inFlight, 'old');
    const s = store({ [A]: 'new' });
    assert.equal(await cache.get(A, 'company', s.load(A)), 'new');
    assert.equal(s.reads.count, 1, 'the old answer was not kept');
  });

  it('keeps nothing absent, and no entry past its time', async () => {
    let now = 0;
    const cache = new CompanyCache({ capacity: 10, ttlMs: 1_000, mode: 'single', clock: () => now });
    const s = store({});
    assert.equal(await cache.get(A, 'company', s.load(A)), undefined);
    s.rows.set(A, 'created elsewhere');
    assert.equal(await cache.get(A, 'company', s.load(A)), 'created elsewhere');
    now = 999;
    assert.equal(await cache.get(A, 'company', s.load(A)), 'created elsewhere');
    assert.equal(s.reads.count, 2);
    now = 1_000;
    s.rows.set(A, 'changed by a CLI');
    assert.equal(await cache.get(A, 'company', s.load(A)), 'changed by a CLI');
  });

  it('single on SQLite: a commit by another process (a CLI command) is seen by the next read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-company-cache-'));
    const server = await openStore({ dataDir: dir });
    const cli = await openStore({ dataDir: dir });
    try {
      await migrateToLatest(server);
      const cache = new CompanyCache({
        capacity: 10,
        ttlMs: 60_000,
        mode: 'single',
        othersCommits: server.othersCommits!,
      });
      const companies = new CompaniesService(server.db, cache);
      const { id } = await companies.create('Origins Co');
      assert.deepEqual((await companies.find(id))?.allowedOrigins, []);
      const hits = cache.stats.hits;
      assert.deepEqual((await companies.find(id))?.allowedOrigins, []);
      assert.equal(cache.stats.hits, hits + 1, 'kept while nobody else wrote');
      await new CompaniesService(cli.db).setAllowedOrigins(id, ['https://shop.example']);
      // A request sent after the command ended arrives by I/O, in a later turn of the event loop (see the cache's
      // `dropAfterOthersCommits`); here both share one process, so the turn is let pass.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual((await companies.find(id))?.allowedOrigins, ['https://shop.example']);
    } finally {
      await cli.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('holds at most `capacity` companies, dropping the least recently used', async () => {
    const cache = new CompanyCache({ capacity: 1, ttlMs: 60_000, mode: 'single' });
    const s = store({ [A]: 'a', [B]: 'b' });
    await cache.get(A, 'company', s.load(A));
    await cache.get(B, 'company', s.load(B));
    await cache.get(A, 'company', s.load(A));
    assert.equal(s.reads.count, 3, 'A was dropped for B');
  });

  it('signalled: uses entries only while subscribed, starts empty on each subscription, drops what others announce', async () => {
    const announced: unknown[] = [];
    let hear: (message: Record<string, unknown>) => void = () => {};
    const cache = new CompanyCache({
      capacity: 10,
      ttlMs: 60_000,
      mode: 'signalled',
      signal: {
        send: async (message) => {
          announced.push(message);
        },
        listen: async (handle) => {
          hear = handle;
        },
        close: async () => {},
      },
    });
    await cache.start();
    const s = store({ [A]: 'a' });
    await cache.get(A, 'company', s.load(A));
    await cache.get(A, 'company', s.load(A));
    assert.equal(s.reads.count, 2, 'not subscribed yet: every read goes to the store');

    cache.subscribed();
    await cache.get(A, 'company', s.load(A));
    await cache.get(A, 'company', s.load(A));
    assert.equal(s.reads.count, 3);

    hear({ company_id: A, node: 'other' });
    assert.equal(cache.stats.heard, 1);
    await cache.get(A, 'company', s.load(A));
    assert.equal(s.reads.count, 4, 'another node changed A');

    cache.lost();
    await cache.get(A, 'company', s.load(A));
    await cache.get(A, 'company', s.load(A));
    assert.equal(s.reads.count, 6, 'while the subscription is down nothing is used');

    cache.subscribed();
    await cache.get(A, 'company', s.load(A));
    assert.equal(s.reads.count, 7, 'starts empty after resubscribing');

    await cache.invalidate(A);
    assert.deepEqual(announced, [{ company_id: A }]);
  });

  it('off (PostgreSQL without Redis): keeps nothing', async () => {
    const cache = new CompanyCache({ capacity: 10, ttlMs: 60_000, mode: 'off' });
    const s = store({ [A]: 'a' });
    await cache.get(A, 'company', s.load(A));
    await cache.get(A, 'company', s.load(A));
    assert.equal(s.reads.count, 2);
  });
});
