import { randomBytes } from 'node:crypto';
import type { Sealer } from './sealing.ts';

/** Where one sealed secret is stored: one row of a table, read back and inserted through these two. */
export interface SealedSecretRow {
  /** What the secret is, for the error when it cannot be stored. */
  what: string;
  /** Associated data it is sealed with (bound to its row, as its `SealedColumn` says). */
  associatedData: string;
  /** How the random bytes are written before sealing. */
  encoding: 'base64' | 'base64url';
  /** The sealed text, if the row exists. */
  readSealed(): Promise<string | undefined>;
  /** Inserts the row unless one exists already (the first creator wins). */
  insertIfAbsent(sealed: string): Promise<void>;
}

/**
 * A random 256-bit secret kept sealed by the master key in one database row, shared by every node: the first
 * process that needs it creates it, and concurrent creators (several nodes) all read back the row that won. It
 * never changes once created (master-key rotation re-wraps it without changing it), so it is read once and kept
 * in memory; a failed read is not kept, the next call tries again.
 */
export class SealedSecret {
  private value?: Promise<Buffer>;

  constructor(
    private readonly sealer: Sealer,
    private readonly row: SealedSecretRow,
  ) {}

  load(): Promise<Buffer> {
    this.value ??= this.readOrCreate().catch((err) => {
      this.value = undefined;
      throw err;
    });
    return this.value;
  }

  private async readOrCreate(): Promise<Buffer> {
    const existing = await this.read();
    if (existing) return existing;
    const { encoding, associatedData } = this.row;
    await this.row.insertIfAbsent(this.sealer.seal(randomBytes(32).toString(encoding), associatedData));
    const created = await this.read();
    if (!created) throw new Error(`${this.row.what} could not be stored`);
    return created;
  }

  private async read(): Promise<Buffer | undefined> {
    const sealed = await this.row.readSealed();
    return sealed === undefined
      ? undefined
      : Buffer.from(this.sealer.open(sealed, this.row.associatedData), this.row.encoding);
  }
}
