import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompaniesService } from '../companies/companies.service.ts';
import { openStore, type Store } from '../storage/database.ts';
import { migrateToLatest } from '../storage/migrate.ts';
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
