import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ErrorCode } from '../errors/codes.ts';
import { createSecretFileOnce, writeSecretBeside } from './secret-file.ts';

/** A versioned 256-bit key-encryption key. */
export interface MasterKey {
  version: number;
  key: Buffer;
}

export class MasterKeyError extends Error {
  readonly code = 'invalid_master_keys' satisfies ErrorCode;
}

export const MASTER_KEY_FILE = 'master-keys';

/**
 * Parses `"2:<base64>,1:<base64>"`. Every key must be exactly 32 bytes; versions are positive and unique.
 * Returned newest first: index 0 seals, all of them open.
 */
export function parseMasterKeys(text: string): MasterKey[] {
  const keys = text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = /^(\d+):([A-Za-z0-9+/=_-]+)$/.exec(entry);
      if (!match) throw new MasterKeyError('master keys must look like "<version>:<base64 of 32 bytes>"');
      const key = Buffer.from(match[2]!, 'base64');
      if (key.length !== 32) throw new MasterKeyError(`master key version ${match[1]} is not 32 bytes`);
      return { version: Number(match[1]), key };
    });
  if (keys.length === 0) throw new MasterKeyError('no master key given');
  if (new Set(keys.map((k) => k.version)).size !== keys.length || keys.some((k) => k.version < 1)) {
    throw new MasterKeyError('master key versions must be unique positive integers');
  }
  return keys.sort((a, b) => b.version - a.version);
}

export const formatMasterKeys = (keys: MasterKey[]): string =>
  keys.map((k) => `${k.version}:${k.key.toString('base64')}`).join('\n');

export interface LoadedMasterKeys {
  keys: MasterKey[];
  /** Where they came from, for logs: `config` or the file path. */
  source: string;
  /** True when this call generated the first key into the data folder. */
  generated: boolean;
}

/**
 * Master keys from config when given; otherwise from `<dataDir>/master-keys`, generated there (mode 0600) on
 * first start so the embedded default needs no setup. Operators should move to PARLEY_MASTER_KEYS (or a mounted
 * secret) in production: a key beside the data it protects only guards against leaks of the database alone.
 */
export function loadMasterKeys(configured: string | undefined, dataDir: string): LoadedMasterKeys {
  if (configured) return { keys: parseMasterKeys(configured), source: 'config', generated: false };
  const file = join(dataDir, MASTER_KEY_FILE);
  if (!existsSync(file)) {
    const keys = [{ version: 1, key: randomBytes(32) }];
    if (createSecretFileOnce(file, `${formatMasterKeys(keys)}\n`))
      return { keys, source: file, generated: true };
  }
  return { keys: parseMasterKeys(readFileSync(file, 'utf8')), source: file, generated: false };
}

/**
 * Puts the `primary` version first (the one `Sealer` seals with); the others stay, newest first, for opening.
 * Without `primary` the list is returned as is (highest version first).
 */
export function withPrimary(keys: MasterKey[], primary: number | undefined): MasterKey[] {
  if (primary === undefined) return keys;
  const key = keys.find((k) => k.version === primary);
  if (!key)
    throw new MasterKeyError(`the primary master key version ${primary} is not among the configured keys`);
  return [key, ...keys.filter((k) => k !== key)];
}

/** Adds a new newest version to the data-folder key file (file-based keys only) and returns the new list. */
export function addMasterKeyVersion(dataDir: string): MasterKey[] {
  const file = join(dataDir, MASTER_KEY_FILE);
  const keys = existsSync(file) ? parseMasterKeys(readFileSync(file, 'utf8')) : [];
  const next = { version: (keys[0]?.version ?? 0) + 1, key: randomBytes(32) };
  const all = [next, ...keys];
  writeMasterKeyFile(dataDir, all);
  return all;
}

/** Replaces the data-folder key file (mode 0600) with `keys`, atomically. */
export function writeMasterKeyFile(dataDir: string, keys: MasterKey[]): void {
  if (keys.length === 0) throw new MasterKeyError('the key file needs at least one master key');
  const file = join(dataDir, MASTER_KEY_FILE);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Write beside and rename: a live server re-reading the file (watchMasterKeyFile) never sees it half written.
  renameSync(writeSecretBeside(file, `${formatMasterKeys(keys)}\n`), file);
}

export interface WatchOptions {
  /** `PARLEY_MASTER_KEY_PRIMARY`: the re-read list is ordered by `withPrimary`; a file without it is invalid. */
  primary?: number;
  /** Told once per changed file that cannot be used (the error names no key material). */
  onInvalid?: (err: unknown) => void;
}

/**
 * For file-based keys: a function that returns the key list again when `<dataDir>/master-keys` changed since the
 * last read (size, mtime or inode), else `undefined`. A running server uses it so `parley master-key rotate`, run
 * beside it, takes effect without a restart. An unreadable or invalid file (including one without the pinned
 * primary version) is ignored (the old keys stay in use) and retried on the next call.
 */
export function watchMasterKeyFile(
  dataDir: string,
  { primary, onInvalid }: WatchOptions = {},
): () => MasterKey[] | undefined {
  const file = join(dataDir, MASTER_KEY_FILE);
  let seen = signatureOf(file);
  let reported: string | undefined;
  return () => {
    const current = signatureOf(file);
    if (current === undefined || current === seen) return undefined;
    try {
      const keys = withPrimary(parseMasterKeys(readFileSync(file, 'utf8')), primary);
      seen = current;
      return keys;
    } catch (err) {
      if (reported !== current) onInvalid?.(err);
      reported = current;
      return undefined;
    }
  };
}

function signatureOf(file: string): string | undefined {
  try {
    const s = statSync(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return undefined;
  }
}
