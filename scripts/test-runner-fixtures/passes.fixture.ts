// scripts/test-runner.test.ts: a file that passes (two tests, one skipped).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

describe('a passing file', () => {
  it('adds', () => assert.equal(1 + 1, 2));
  it('concatenates', () => assert.equal('a' + 'b', 'ab'));
  it.skip('is skipped', () => {});
});
