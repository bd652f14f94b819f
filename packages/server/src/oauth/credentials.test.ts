import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  generateClientId,
  generateClientSecret,
  isClientIdSyntax,
  isWellFormedSecret,
  randomBase62,
} from './credentials.ts';

describe('API-client credential formats', () => {
  it('client ids are pcl_ + 22 base62 characters and never repeat', () => {
    const ids = new Set(Array.from({ length: 500 }, generateClientId));
    assert.equal(ids.size, 500);
    for (const id of ids) {
      assert.match(id, /^pcl_[0-9A-Za-z]{22}$/);
      assert.equal(isClientIdSyntax(id), true);
    }
    assert.equal(isClientIdSyntax('pcl_short'), false);
    assert.equal(isClientIdSyntax(`usr_${'a'.repeat(22)}`), false);
  });

  it('secrets carry ≥256 random bits, a typed prefix and a valid checksum, in a form-safe alphabet', () => {
    for (let i = 0; i < 200; i++) {
      const secret = generateClientSecret();
      assert.match(secret, /^pcs_[0-9A-Za-z]{49}$/);
      // 43 base62 characters of randomness: 43 × log2(62) ≈ 256.03 bits.
      assert.ok(43 * Math.log2(62) >= 256);
      assert.equal(isWellFormedSecret(secret), true);
      // base62 survives form-urlencoding unchanged (RFC 6749 App. B), so lazy clients work too.
      assert.equal(encodeURIComponent(secret), secret);
    }
  });

  it('detects a typo, a truncation or a foreign string by the checksum alone', () => {
    const secret = generateClientSecret();
    const flipped = secret.slice(0, 10) + (secret[10] === 'a' ? 'b' : 'a') + secret.slice(11);
    assert.equal(isWellFormedSecret(flipped), false);
    assert.equal(isWellFormedSecret(secret.slice(0, -1)), false);
    assert.equal(isWellFormedSecret(`pcs_${'A'.repeat(49)}`), false);
    assert.equal(isWellFormedSecret(`xxx_${secret.slice(4)}`), false);
    assert.equal(isWellFormedSecret(`${secret} `), false);
  });

  it('draws base62 characters without bias toward the first ones', () => {
    const sample = randomBase62(62 * 400);
    const counts = new Map<string, number>();
    for (const ch of sample) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    assert.equal(counts.size, 62);
    // Unbiased, the first 8 characters get 8 × 400 = 3200 (σ ≈ 57); `byte % 62` over all 256 byte values would
    // give them 5/4 of their share, ≈ 3875.
    const firstEight = [...'01234567'].reduce((sum, ch) => sum + (counts.get(ch) ?? 0), 0);
    assert.ok(firstEight > 2900 && firstEight < 3500, `first eight ${firstEight}`);
  });
});
