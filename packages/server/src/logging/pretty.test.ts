import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from './logger.ts';
import { formatRecord } from './pretty.ts';

describe('readable log lines (PARLEY_LOG_FORMAT=pretty, or auto on a terminal)', () => {
  it('writes time, level, message, the access summary and the other fields, secrets still redacted', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) }, 'pretty');
    logger.child({ request_id: 'req-1' }).info(
      {
        req: { method: 'POST', url: '/platform/v1/auth/token/client-credentials?x=1', ip: '127.0.0.1' },
        res: { statusCode: 200 },
        responseTime: 1.234,
        body: { client_secret: 'do-not-print' },
      },
      'request completed',
    );
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!,
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}request completed POST \/platform\/v1\/auth\/token\/client-credentials 200 1\.2ms /,
    );
    assert.match(lines[0]!, / request_id=req-1/);
    assert.match(lines[0]!, / body=\{"client_secret":"\[redacted\]"\}/);
    assert.ok(!lines[0]!.includes('do-not-print'));
    assert.ok(!lines[0]!.includes('\x1b['), 'no colour codes when not writing to a terminal');
  });

  it('colours the level on a terminal; JSON stays JSON', () => {
    const line = formatRecord({ level: 50, time: '2026-01-01T12:00:01.234Z', msg: 'boom' }, true);
    assert.equal(line, '12:00:01.234 \u001b[31mERROR\u001b[0m boom');
    const lines: string[] = [];
    createLogger('info', { write: (l: string) => void lines.push(l) }, 'json').info('plain');
    assert.equal(JSON.parse(lines[0]!).msg, 'plain');
  });
});
