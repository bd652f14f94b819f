import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { addMasterKeyVersion, loadMasterKeys, parseMasterKeys } from './master-keys.ts';
import { SealError, Sealer } from './sealing.ts';

const key = (version: number) => ({ version, key: randomBytes(32) });

describe('sealing (AES-256-GCM envelope encryption)', () => {
  it('round-trips and never contains the plaintext', () => {
    const sealer = new Sealer([key(1)]);
    const sealed = sealer.seal('sk-live-secret-value', 'connector|a|b|1');
    assert.doesNotMatch(sealed, /sk-live/);
    assert.equal(sealer.open(sealed, 'connector|a|b|1'), 'sk-live-secret-value');
    assert.notEqual(sealer.seal('same', 'x'), sealer.seal('same', 'x'), 'fresh DEK and nonce each time');
  });

  it('refuses a ciphertext moved to other associated data or tampered with', () => {
    const sealer = new Sealer([key(1)]);
    const sealed = sealer.seal('secret', 'connector|a|b|1');
    assert.throws(() => sealer.open(sealed, 'connector|a|c|1'), SealError);
    assert.throws(() => sealer.open(sealed, 'connector|a|b|2'), SealError);
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[14]! ^= 1;
    parts[3] = body.toString('base64url');
    assert.throws(() => sealer.open(parts.join('.'), 'connector|a|b|1'), SealError);
    assert.throws(() => sealer.open('garbage', 'connector|a|b|1'), SealError);
  });

  it('re-wraps under a new master key without changing the value, then works without the old key', () => {
    const v1 = key(1);
    const v2 = key(2);
    const old = new Sealer([v1]).seal('secret', 'ad');
    const both = new Sealer([v2, v1]);
    assert.equal(both.versionOf(old), 1);
    const rewrapped = both.rewrap(old, 'ad');
    assert.equal(both.versionOf(rewrapped), 2);
    assert.equal(rewrapped.split('.')[3], old.split('.')[3], 'the sealed value itself is untouched');
    assert.equal(new Sealer([v2]).open(rewrapped, 'ad'), 'secret');
    assert.throws(() => new Sealer([v2]).open(old, 'ad'), /version 1 is not configured/);
  });
});

describe('master keys', () => {
  it('parses versioned keys newest first and rejects bad ones', () => {
    const a = randomBytes(32).toString('base64');
    const b = randomBytes(32).toString('base64');
    assert.deepEqual(
      parseMasterKeys(`1:${a},3:${b}`).map((k) => k.version),
      [3, 1],
    );
    assert.throws(() => parseMasterKeys('1:short'), /32 bytes/);
    assert.throws(() => parseMasterKeys(`1:${a},1:${b}`), /unique/);
    assert.throws(() => parseMasterKeys('nonsense'), /version/);
  });

  it('generates a 0600 key file on first start, reuses it, and adds versions', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-mk-'));
    const first = loadMasterKeys(undefined, dir);
    assert.equal(first.generated, true);
    assert.equal(statSync(join(dir, 'master-keys')).mode & 0o777, 0o600);
    const again = loadMasterKeys(undefined, dir);
    assert.equal(again.generated, false);
    assert.deepEqual(again.keys[0]!.key, first.keys[0]!.key);
    const rotated = addMasterKeyVersion(dir);
    assert.deepEqual(
      rotated.map((k) => k.version),
      [2, 1],
    );
    assert.equal(loadMasterKeys(undefined, dir).keys[0]!.version, 2);
    assert.match(readFileSync(join(dir, 'master-keys'), 'utf8'), /^2:/);
  });

  it('prefers configured keys over the data folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-mk-'));
    const configured = `7:${randomBytes(32).toString('base64')}`;
    const loaded = loadMasterKeys(configured, dir);
    assert.equal(loaded.source, 'config');
    assert.equal(loaded.keys[0]!.version, 7);
  });
});
