import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomBase64url, randomHex } from './random-pool.ts';

describe('random pool', () => {
  it('hands out fresh bytes of the asked size, across refills of its buffer', () => {
    // 2,000 × 16 bytes spans several 4 KiB refills; a byte handed out twice would show up as a repeat.
    const ids = Array.from({ length: 2000 }, () => randomBase64url(16));
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{22}$/);
    assert.match(randomHex(10), /^[0-9a-f]{20}$/);
  });

  it('spreads its bytes evenly (no stuck or zeroed stretch)', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 500; i++) for (const digit of randomHex(64)) counts[Number.parseInt(digit, 16)]!++;
    // 64,000 hex digits, 4,000 expected per value; ±15 % is far outside chance for a working CSPRNG.
    for (const count of counts) assert.ok(count > 3400 && count < 4600, `digit count ${count}`);
  });

  it('refuses a request larger than its buffer', () => {
    assert.throws(() => randomHex(5000), RangeError);
  });
});
