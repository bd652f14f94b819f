import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { ErrorCode } from '../errors/codes.ts';
import type { MasterKey } from './master-keys.ts';

/**
 * Envelope encryption for secrets at rest (connector API keys, token signing keys).
 *
 * Each value gets its own random data key (DEK); the value is sealed with AES-256-GCM under the DEK, and the DEK
 * is wrapped with AES-256-GCM under the newest master key. Both layers bind the caller's associated data (e.g.
 * `connector|<company>|<connector>|<version>`), so a ciphertext copied to another row fails to open. A fresh DEK
 * per value keeps every key far below NIST SP 800-38D's 2^32 random-nonce limit. Master-key rotation re-wraps
 * only the DEK (`rewrap`), never exposing or re-encrypting the value.
 *
 * Format (text, safe in any column): `pse1.<master version>.<wrapped DEK>.<sealed value>`, each part base64url of
 * nonce(12) | ciphertext | tag(16).
 */
const FORMAT = 'pse1';
const NONCE = 12;
const TAG = 16;

export class SealError extends Error {
  readonly code = 'seal_integrity' satisfies ErrorCode;
}

export class Sealer {
  private masterKeys: MasterKey[];
  /** Keys `derivedKey` made, by purpose and master version. */
  private readonly derived = new Map<string, Buffer>();

  /**
   * @param refreshKeys Optional: returns a newer key list when the key source changed (file-based keys change when
   *   `parley master-key rotate` runs beside a live server), else `undefined`. Asked before every seal (so new values
   *   use the newest master key) and when an envelope names a version this process does not know yet (so values
   *   re-wrapped by the CLI keep opening), which keeps a running server working through a master-key rotation.
   */
  constructor(
    masterKeys: MasterKey[],
    private readonly refreshKeys?: () => MasterKey[] | undefined,
  ) {
    if (masterKeys.length === 0) throw new Error('at least one master key is required');
    this.masterKeys = masterKeys;
  }

  get currentVersion(): number {
    return this.masterKeys[0]!.version;
  }

  /** Master versions this process can open, newest first. */
  get versions(): number[] {
    return this.masterKeys.map((k) => k.version);
  }

  seal(plaintext: string, associatedData: string): string {
    this.refresh();
    const master = this.masterKeys[0]!;
    const dek = randomBytes(32);
    const wrapped = gcmEncrypt(master.key, dek, `dek|${associatedData}`);
    const sealed = gcmEncrypt(dek, Buffer.from(plaintext, 'utf8'), `val|${associatedData}`);
    dek.fill(0);
    return [FORMAT, master.version, wrapped.toString('base64url'), sealed.toString('base64url')].join('.');
  }

  open(envelope: string, associatedData: string): string {
    const { masterVersion, wrapped, sealed } = parse(envelope);
    const dek = gcmDecrypt(this.masterKey(masterVersion).key, wrapped, `dek|${associatedData}`);
    try {
      return gcmDecrypt(dek, sealed, `val|${associatedData}`).toString('utf8');
    } finally {
      dek.fill(0);
    }
  }

  /** Master version an envelope is wrapped with (to find what `master-key rotate` still has to re-wrap). */
  versionOf(envelope: string): number {
    return parse(envelope).masterVersion;
  }

  /**
   * A 256-bit key for one purpose (e.g. `attachment-links`), derived from a master key with HKDF-SHA256 (RFC 5869;
   * the purpose is the `info`), so signing keys need no secret file of their own and follow master-key rotation:
   * without `version` the primary key's (to sign), with it that version's (to verify what an older key signed).
   * `undefined` for a version this process does not know.
   */
  derivedKey(purpose: string, version?: number): { version: number; key: Buffer } | undefined {
    if (version === undefined) this.refresh();
    const master =
      version === undefined ? this.masterKeys[0]! : this.masterKeys.find((k) => k.version === version);
    if (!master) return undefined;
    // A version's master key never changes, so neither does what is derived from it: derive once.
    const cacheKey = `${purpose}|${master.version}`;
    let key = this.derived.get(cacheKey);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', master.key, Buffer.alloc(0), `parley|${purpose}`, 32));
      this.derived.set(cacheKey, key);
    }
    return { version: master.version, key };
  }

  /** Re-wraps the DEK under the newest master key; the sealed value is untouched. */
  rewrap(envelope: string, associatedData: string): string {
    const { masterVersion, wrapped, sealed } = parse(envelope);
    const current = this.masterKeys[0]!;
    if (masterVersion === current.version) return envelope;
    const dek = gcmDecrypt(this.masterKey(masterVersion).key, wrapped, `dek|${associatedData}`);
    try {
      const rewrapped = gcmEncrypt(current.key, dek, `dek|${associatedData}`);
      return [FORMAT, current.version, rewrapped.toString('base64url'), sealed.toString('base64url')].join(
        '.',
      );
    } finally {
      dek.fill(0);
    }
  }

  private masterKey(version: number): MasterKey {
    let key = this.masterKeys.find((k) => k.version === version);
    if (!key && this.refresh()) key = this.masterKeys.find((k) => k.version === version);
    if (!key) throw new SealError(`master key version ${version} is not configured`);
    return key;
  }

  private refresh(): boolean {
    const keys = this.refreshKeys?.();
    if (!keys || keys.length === 0) return false;
    this.masterKeys = keys;
    return true;
  }
}

function parse(envelope: string): { masterVersion: number; wrapped: Buffer; sealed: Buffer } {
  const parts = envelope.split('.');
  if (parts.length !== 4 || parts[0] !== FORMAT || !/^\d+$/.test(parts[1]!)) {
    throw new SealError('sealed value is malformed');
  }
  return {
    masterVersion: Number(parts[1]),
    wrapped: Buffer.from(parts[2]!, 'base64url'),
    sealed: Buffer.from(parts[3]!, 'base64url'),
  };
}

function gcmEncrypt(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const nonce = randomBytes(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]);
}

function gcmDecrypt(key: Buffer, box: Buffer, aad: string): Buffer {
  if (box.length < NONCE + TAG) throw new SealError('sealed value is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, box.subarray(0, NONCE), { authTagLength: TAG });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(box.subarray(box.length - TAG));
  try {
    return Buffer.concat([decipher.update(box.subarray(NONCE, box.length - TAG)), decipher.final()]);
  } catch {
    // GCM tag mismatch: tampered ciphertext, wrong row (associated data) or wrong key.
    throw new SealError('sealed value failed its integrity check');
  }
}
