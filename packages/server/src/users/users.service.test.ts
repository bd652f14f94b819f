import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dropTestSchema, TEST_DATABASES, testPostgresUrl, uniqueSchema } from '@parley/testing/databases';
import { CompaniesService } from '../companies/companies.service.ts';
import { openStore, type Store } from '../storage/database.ts';
import { migrateToLatest } from '../storage/migrate.ts';
import * as m082 from '../storage/migrations/082_portal_user_names.ts';
import { PASSWORD_MAX_LENGTH } from './users.errors.ts';
import { UsersService } from './users.service.ts';

describe('portal user sign-in', () => {
  let store: Store;
  let users: UsersService;
  before(async () => {
    store = await openStore({ dataDir: '.', sqliteFile: ':memory:' });
    await migrateToLatest(store);
    const company = await new CompaniesService(store.db).create('Timing Co');
    users = new UsersService(store.db);
    await users.create({
      companyId: company.id,
      email: 'known@timing.test',
      password: 'twelve chars!',
      role: 'agent',
    });
  });
  after(() => store.close());

  /** Median time of a few failed sign-ins, in ms. */
  async function medianMs(email: string, password: string): Promise<number> {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      assert.equal(await users.verifyCredentials(email, password), undefined);
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[2]!;
  }

  it('costs an argon2 verification for an over-long password, whether or not the email is known', async () => {
    const tooLong = 'x'.repeat(PASSWORD_MAX_LENGTH + 1);
    const unknown = await medianMs('nobody@timing.test', tooLong);
    const known = await medianMs('known@timing.test', tooLong);
    // Skipping argon2 answers in about a millisecond; one verification takes tens of them.
    assert.ok(known > unknown * 0.25, `known ${known.toFixed(1)} ms vs unknown ${unknown.toFixed(1)} ms`);
  });
});

for (const database of TEST_DATABASES) {
  describe(`display names (${database})`, () => {
    let store: Store;
    let users: UsersService;
    let companyId: string;
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-user-names-'));
    const schema = database === 'postgres' ? uniqueSchema() : undefined;
    before(async () => {
      store = await openStore({ dataDir, ...(schema ? { databaseUrl: testPostgresUrl(), schema } : {}) });
      await migrateToLatest(store);
      companyId = (await new CompaniesService(store.db).create('Names Co')).id;
      users = new UsersService(store.db);
    });
    after(async () => {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (schema) await dropTestSchema(schema);
    });

    it('stores a display name, tidied, and renames within the company only', async () => {
      const dana = await users.create({
        companyId,
        email: 'dana@names.test',
        password: 'twelve chars!',
        role: 'agent',
        name: '  Dana   Reyes  ',
      });
      assert.equal(dana.name, 'Dana Reyes');
      assert.equal((await users.find(dana.id))?.name, 'Dana Reyes');
      assert.equal((await users.setName(companyId, dana.id, 'Dana')).name, 'Dana');
      assert.equal((await users.setName(companyId, dana.id, null)).name, null);
      const other = (await new CompaniesService(store.db).create('Other Co')).id;
      await assert.rejects(users.setName(other, dana.id, 'Hijacked'), { code: 'user_not_found' });
      for (const bad of ['x'.repeat(81), 'Dana\u202eRAE', 'Dana\rReyes', ' '])
        await assert.rejects(
          users.setName(companyId, dana.id, bad),
          { code: 'invalid_name' },
          JSON.stringify(bad),
        );
      assert.equal(
        (await users.setName(companyId, dana.id, 'Zoë 👩‍💻')).name,
        'Zoë 👩‍💻',
        'letters and emoji are fine',
      );
    });

    it('migration 082 drops the column on the way down and brings it back empty, keeping the users', async () => {
      await users.create({
        companyId,
        email: 'kim@names.test',
        password: 'twelve chars!',
        role: 'agent',
        name: 'Kim',
      });
      await m082.down(store.db);
      const row = await store.db
        .selectFrom('portal_users')
        .selectAll()
        .where('email', '=', 'kim@names.test')
        .executeTakeFirst();
      assert.ok(row && !('name' in row), 'no name column');
      await m082.up(store.db);
      assert.equal((await users.list(companyId)).find((u) => u.email === 'kim@names.test')?.name, null);
    });
  });
}
