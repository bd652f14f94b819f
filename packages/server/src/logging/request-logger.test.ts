import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { createLogger } from './logger.ts';
import { lazyRequestLogger } from './request-logger.ts';

/** A real process logger (packages/server/src/logging/logger.ts) writing its JSON lines into `lines`. */
function loggerInto(lines: string[], level = 'info') {
  return createLogger(level, { write: (line: string) => lines.push(line) });
}

describe("a request's logger, made when first used", () => {
  it('writes exactly the lines the eager pino child writes: same bindings, same keys, same order', () => {
    const eagerLines: string[] = [];
    const lazyLines: string[] = [];
    const eager = loggerInto(eagerLines).child({ request_id: 'req-1' }, {});
    const lazy = lazyRequestLogger(loggerInto(lazyLines), { request_id: 'req-1' }, {});
    for (const log of [eager, lazy]) {
      log.info({ client_id: 'c1' }, 'token request failed');
      log.warn('plain message');
      log.error({ err: new Error('boom') }, 'request errored');
      log.child({ company_id: 'co-1' }).info('attributed');
    }
    const withoutTime = (line: string) =>
      line.replace(/"time":"[^"]+"/, '"time":"-"').replace(/"stack":"[^"]*"/, '');
    assert.equal(lazyLines.length, 4);
    assert.deepEqual(lazyLines.map(withoutTime), eagerLines.map(withoutTime));
    const first = JSON.parse(lazyLines[0]!);
    assert.equal(first.request_id, 'req-1');
    assert.equal(first.client_id, 'c1');
    assert.equal(JSON.parse(lazyLines[3]!).company_id, 'co-1');
  });

  it('drops lines below the level, answers the level questions as the child would, and follows a level set on it', () => {
    const lines: string[] = [];
    const lazy = lazyRequestLogger(loggerInto(lines, 'info'), { request_id: 'req-2' }, {});
    lazy.debug('not written');
    lazy.trace('not written either');
    assert.equal(lines.length, 0);
    assert.equal(lazy.level, 'info');
    assert.equal(lazy.isLevelEnabled('debug'), false);
    assert.equal(lazy.isLevelEnabled('warn'), true);
    lazy.level = 'debug';
    lazy.debug('now written');
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]!).request_id, 'req-2');
    assert.equal(lazy.bindings().request_id, 'req-2');
  });

  it('takes a route level from the options (Fastify passes a route-level logLevel there)', () => {
    const lines: string[] = [];
    const lazy = lazyRequestLogger(loggerInto(lines, 'info'), { request_id: 'req-3' }, { level: 'warn' });
    assert.equal(lazy.level, 'warn');
    lazy.info('dropped at the route level');
    lazy.warn('kept');
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]!).level, pino.levels.values.warn);
  });
});
