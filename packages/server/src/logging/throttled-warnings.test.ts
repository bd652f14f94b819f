import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ThrottledWarnings } from './throttled-warnings.ts';

describe('throttled warnings (one line per message per interval through an outage)', () => {
  const setup = () => {
    const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
    let now = 1_000_000;
    const warnings = new ThrottledWarnings(
      {
        warn: ((fields: Record<string, unknown>, message: string) =>
          lines.push({ fields, message })) as never,
      },
      { intervalMs: 30_000, clock: () => now },
    );
    const advance = (ms: number): void => {
      now += ms;
    };
    return { lines, warnings, advance };
  };

  it('writes the first occurrence, counts the repeats, then one summary with the count per interval', () => {
    const { lines, warnings, advance } = setup();
    // The dispatcher's poll every 100 ms through a 65 s outage.
    for (let i = 0; i < 650; i++) {
      warnings.warn({ err: { message: 'connect ECONNREFUSED' } }, 'could not claim webhook deliveries');
      advance(100);
    }
    assert.deepEqual(
      lines.map((l) => l.message),
      [
        'could not claim webhook deliveries',
        'could not claim webhook deliveries (repeated 300 times in the last 30 s)',
        'could not claim webhook deliveries (repeated 300 times in the last 30 s)',
      ],
    );
    assert.equal(lines[1]!.fields.repeated, 300);
    assert.deepEqual(lines[1]!.fields.err, { message: 'connect ECONNREFUSED' });
  });

  it('throttles each message on its own, and a message that stopped repeating is written plainly next time', () => {
    const { lines, warnings, advance } = setup();
    warnings.warn({ messageId: 'a' }, 'could not publish a partial snapshot');
    warnings.warn({ messageId: 'b' }, 'could not publish a partial snapshot');
    warnings.warn({}, 'could not write a partial snapshot; streaming on');
    assert.equal(lines.length, 2);
    advance(60_000);
    warnings.warn({}, 'could not write a partial snapshot; streaming on');
    assert.equal(lines.at(-1)!.message, 'could not write a partial snapshot; streaming on');
    assert.equal(lines.at(-1)!.fields.repeated, undefined);
  });
});
