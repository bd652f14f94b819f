import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BrokerError } from '@parley/realtime';
import { AppError } from './app-error.ts';
import { dependencyUnavailable, RETRY_AFTER_SECONDS } from './unavailable.ts';

const coded = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('dependencyUnavailable tells an outage from a bug', () => {
  it('answers a lost or refused store, a full disk and every other store write failure as 503 store_unavailable with Retry-After', () => {
    for (const error of [
      coded('ECONNREFUSED'),
      coded('57P01', 'terminating connection due to administrator command'),
      coded('SQLITE_BUSY'),
      coded('SQLITE_FULL', 'database or disk is full'),
      coded('SQLITE_IOERR_WRITE', 'disk I/O error'),
      coded('SQLITE_READONLY_DBMOVED', 'attempt to write a readonly database'),
      coded('53100', 'could not extend file: No space left on device'),
      coded('58030', 'could not write to file'),
      coded('25006', 'cannot execute INSERT in a read-only transaction'),
      coded('40P01', 'deadlock detected'),
      coded('40001', 'could not serialize access due to concurrent update'),
      new Error('Connection terminated unexpectedly'),
      new Error('query failed', { cause: coded('08006') }),
    ]) {
      const answer = dependencyUnavailable(error);
      assert.equal(answer?.code, 'store_unavailable', error.message);
      assert.equal(answer.status, 503);
      assert.deepEqual(answer.extensions, { retry_after: RETRY_AFTER_SECONDS });
      assert.deepEqual(answer.headers, { 'retry-after': String(RETRY_AFTER_SECONDS) });
    }
  });

  it('answers an unreachable broker as 503 broker_unavailable with Retry-After', () => {
    for (const error of [
      new BrokerError('broker_unavailable', 'redis: not connected (reconnecting)'),
      Object.assign(new Error('Reached the max retries per request limit'), {
        name: 'MaxRetriesPerRequestError',
      }),
      new Error('publish failed', { cause: new Error('Connection is closed.') }),
    ]) {
      const answer = dependencyUnavailable(error);
      assert.equal(answer?.code, 'broker_unavailable', error.message);
      assert.equal(answer.status, 503);
      assert.deepEqual(answer.extensions, { retry_after: RETRY_AFTER_SECONDS });
      assert.deepEqual(answer.headers, { 'retry-after': String(RETRY_AFTER_SECONDS) });
    }
  });

  it('keeps a 503 AppError as it is and leaves everything else to the caller', () => {
    const down = new AppError(503, 'store_unavailable', 'down');
    assert.equal(dependencyUnavailable(down), down);
    assert.equal(dependencyUnavailable(new AppError(400, 'bad_request', 'no')), undefined);
    assert.equal(dependencyUnavailable(new BrokerError('broker_bad_reply', 'unexpected reply')), undefined);
    assert.equal(dependencyUnavailable(coded('23505', 'duplicate key')), undefined);
    assert.equal(dependencyUnavailable(new TypeError('x is undefined')), undefined);
  });
});
