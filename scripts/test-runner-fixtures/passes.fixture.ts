// scripts/test-runner.test.ts: a file that passes (two tests, one skipped).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

describe('a passing file', () => {
  it('adds', () => assert.equal(1 + 1, 2));
  it('concatenates', () => assert.equal('a' + 'b', 'ab'));
  // Skipped on purpose: scripts/test-runner.test.ts checks that the closing line counts a skipped test.
  it.skip('is skipped', () => {});
});
