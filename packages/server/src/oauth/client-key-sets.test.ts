import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestClock } from '@parley/testing/clock';
import {
  type ClientSigningKey,
  type JwksServer,
  makeClientKey,
  startJwksServer,
} from '@parley/testing/oauth/jwks-server';
import pino from 'pino';
import type { ApiClient } from './api-clients.service.ts';
import { ClientKeySets, KeySetUnavailableError, REFETCH_INTERVAL_MS } from './client-key-sets.ts';

const CACHE_SECONDS = 300;

describe('ClientKeySets: a jwks_uri key set fetched, cached with a bound, re-fetched on rotation', () => {
  let jwks: JwksServer;
  let keyA: ClientSigningKey;
  let keyB: ClientSigningKey;
  const clientOf = (uri: string, id = 'pcl_a'): ApiClient =>
    ({ clientId: id, jwksUri: uri, jwks: null }) as unknown as ApiClient;

  before(async () => {
    jwks = await startJwksServer();
    keyA = await makeClientKey('a');
    keyB = await makeClientKey('b');
  });
  after(() => jwks.close());

  const setsWith = (clock: TestClock) =>
    new ClientKeySets(
      (url, init) => fetch(url, init),
      CACHE_SECONDS,
      pino({ level: 'silent' }),
      () => clock.now(),
    );

  it('fetches once, serves from the cache until it is too old, then fetches again', async () => {
    const clock = new TestClock();
    const sets = setsWith(clock);
    jwks.publish([keyA.publicJwk]);
    const before = jwks.requests;
    const client = clientOf(jwks.url);
    assert.deepEqual(
      (await sets.keysOf(client)).map((k) => k.kid),
      ['a'],
    );
    assert.deepEqual(
      (await sets.keysOf(client)).map((k) => k.kid),
      ['a'],
    );
    assert.equal(jwks.requests - before, 1);
    jwks.publish([keyB.publicJwk]);
    clock.advance(CACHE_SECONDS * 1000 - 1);
    assert.deepEqual(
      (await sets.keysOf(client)).map((k) => k.kid),
      ['a'],
    );
    clock.advance(1);
    assert.deepEqual(
      (await sets.keysOf(client)).map((k) => k.kid),
      ['b'],
    );
    assert.equal(jwks.requests - before, 2);
  });

  it('re-fetches for an unknown kid at most once per interval per client', async () => {
    const clock = new TestClock();
    const sets = setsWith(clock);
    jwks.publish([keyA.publicJwk]);
    const client = clientOf(jwks.url, 'pcl_refetch');
    await sets.keysOf(client);
    const before = jwks.requests;
    assert.equal(await sets.refetched(client), undefined, 'too soon after the first fetch');
    clock.advance(REFETCH_INTERVAL_MS);
    jwks.publish([keyA.publicJwk, keyB.publicJwk]);
    assert.deepEqual(
      (await sets.refetched(client))?.map((k) => k.kid),
      ['a', 'b'],
    );
    assert.equal(await sets.refetched(client), undefined);
    assert.equal(jwks.requests - before, 1);
  });

  it('keeps the known keys when a re-fetch fails, and fails without any known keys', async () => {
    const clock = new TestClock();
    const sets = setsWith(clock);
    jwks.publish([keyA.publicJwk]);
    const client = clientOf(jwks.url, 'pcl_stale');
    await sets.keysOf(client);
    jwks.fail(503);
    clock.advance(CACHE_SECONDS * 1000);
    assert.deepEqual(
      (await sets.keysOf(client)).map((k) => k.kid),
      ['a'],
    );
    await assert.rejects(sets.keysOf(clientOf(jwks.url, 'pcl_never')), KeySetUnavailableError);
    jwks.fail(undefined);
  });

  it('refuses an answer that is not a JWK Set of public keys', async () => {
    const sets = setsWith(new TestClock());
    jwks.publish([{ ...keyA.publicJwk, d: 'private' }]);
    await assert.rejects(sets.keysOf(clientOf(jwks.url, 'pcl_private')), KeySetUnavailableError);
    jwks.publish([]);
    await assert.rejects(sets.keysOf(clientOf(jwks.url, 'pcl_empty')), KeySetUnavailableError);
  });
});
