import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import {
  addMasterKeyVersion,
  loadMasterKeys,
  MasterKeyError,
  parseMasterKeys,
  watchMasterKeyFile,
  withPrimary,
  writeMasterKeyFile,
} from './master-keys.ts';
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

  it('gives every concurrent first load on an empty folder the same, complete key (server and CLI at once)', async () => {
    const loaders = 4;
    const rounds = 25;
    const parent = mkdtempSync(join(tmpdir(), 'parley-mk-race-'));
    const dirs = Array.from({ length: rounds }, () => mkdtempSync(join(parent, 'round-')));
    // One counter per round: each thread waits for all the others before loading, so the first loads overlap.
    const arrived = new SharedArrayBuffer(rounds * 4);
    const source = `
      const { workerData, parentPort } = require('node:worker_threads');
      // Worker threads do not inherit the test process's tsx loader: load the TypeScript module through its API.
      const { loadMasterKeys } = require('tsx/cjs/api').require(workerData.module, workerData.module);
      const arrived = new Int32Array(workerData.arrived);
      parentPort.postMessage(
        workerData.dirs.map((dir, round) => {
          Atomics.add(arrived, round, 1);
          // Spin (all start within nanoseconds of each other), but never for ever should a loader have died.
          const until = Date.now() + 5000;
          while (Atomics.load(arrived, round) < workerData.loaders && Date.now() < until);
          try {
            const loaded = loadMasterKeys(undefined, dir);
            return { key: loaded.keys[0].key.toString('base64'), generated: loaded.generated };
          } catch (err) {
            return { error: err.code ?? err.message };
          }
        }),
      );
    `;
    const module = fileURLToPath(new URL('./master-keys.ts', import.meta.url));
    type Result = { key?: string; generated?: boolean; error?: string };
    const workers = Array.from(
      { length: loaders },
      () => new Worker(source, { eval: true, workerData: { module, dirs, arrived, loaders } }),
    );
    let perLoader: Result[][];
    try {
      perLoader = await Promise.all(
        workers.map(
          (worker) =>
            new Promise<Result[]>((resolve, reject) => {
              worker.once('message', resolve);
              worker.once('error', reject);
            }),
        ),
      );
    } finally {
      await Promise.all(workers.map((worker) => worker.terminate()));
    }
    for (const [round, dir] of dirs.entries()) {
      const results = perLoader.map((r) => r[round]!);
      assert.deepEqual(
        results.filter((r) => r.error),
        [],
        `round ${round}: no loader fails`,
      );
      const onFile = parseMasterKeys(readFileSync(join(dir, 'master-keys'), 'utf8'))[0]!.key.toString(
        'base64',
      );
      assert.deepEqual(
        results.map((r) => r.key),
        results.map(() => onFile),
        `round ${round}: every loader uses the key on file`,
      );
      assert.equal(results.filter((r) => r.generated).length, 1, `round ${round}: exactly one generated it`);
      assert.equal(statSync(join(dir, 'master-keys')).mode & 0o777, 0o600);
      assert.deepEqual(readdirSync(dir), ['master-keys'], `round ${round}: no temporary file left behind`);
    }
    rmSync(parent, { recursive: true, force: true });
  });

  it('keeps the previous keys when the changed file lacks the pinned primary version, and says so once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-mk-'));
    const [v1, v2, v3] = [key(1), key(2), key(3)];
    writeMasterKeyFile(dir, [v2, v1]);
    const invalid: unknown[] = [];
    const sealer = new Sealer(
      withPrimary([v2, v1], 1),
      watchMasterKeyFile(dir, { primary: 1, onInvalid: (err) => invalid.push(err) }),
    );
    const before = sealer.seal('secret', 'ad');

    writeMasterKeyFile(dir, [v2]);
    const during = sealer.seal('secret', 'ad');
    assert.equal(sealer.versionOf(during), 1, 'still seals with the pinned version');
    assert.equal(sealer.open(before, 'ad'), 'secret');
    sealer.seal('again', 'ad');
    assert.equal(invalid.length, 1, 'one warning for one changed file');
    assert.ok(invalid[0] instanceof MasterKeyError);

    writeMasterKeyFile(dir, [v3, v1]);
    assert.equal(sealer.versionOf(sealer.seal('secret', 'ad')), 1);
    assert.deepEqual(sealer.versions, [1, 3], 'a valid file is taken again, the pinned version first');
    assert.equal(invalid.length, 1);
  });

  it('prefers configured keys over the data folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-mk-'));
    const configured = `7:${randomBytes(32).toString('base64')}`;
    const loaded = loadMasterKeys(configured, dir);
    assert.equal(loaded.source, 'config');
    assert.equal(loaded.keys[0]!.version, 7);
  });
});

describe('derived keys (HKDF-SHA256 from the master keys)', () => {
  it('are stable per purpose and version, differ between them, and follow the primary key', () => {
    const [v1, v2] = [key(1), key(2)];
    const sealer = new Sealer([v2, v1]);
    const primary = sealer.derivedKey('attachment-links')!;
    assert.equal(primary.version, 2);
    assert.equal(primary.key.length, 32);
    assert.deepEqual(sealer.derivedKey('attachment-links', 2)!.key, primary.key);
    assert.notDeepEqual(sealer.derivedKey('attachment-links', 1)!.key, primary.key);
    assert.notDeepEqual(sealer.derivedKey('other-purpose')!.key, primary.key);
    assert.ok(!primary.key.equals(v2.key), 'never the master key itself');
    assert.equal(sealer.derivedKey('attachment-links', 3), undefined);
    // Another process with the same master keys derives the same key (every node of a cluster verifies alike).
    assert.deepEqual(new Sealer([v2, v1]).derivedKey('attachment-links')!.key, primary.key);
  });
});
