import { randomFillSync } from 'node:crypto';

/**
 * Cryptographically secure random bytes handed out from a 4 KiB buffer refilled by the CSPRNG, the way node's own
 * `randomUUID` caches entropy: one `randomFillSync` call per 4 KiB instead of one native call and one allocation
 * per id, on paths that mint an id per request (token `jti`, audit event ids). Each byte is handed out once.
 */
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let offset = POOL_SIZE;

function take(size: number): Buffer {
  if (size > POOL_SIZE) throw new RangeError(`at most ${POOL_SIZE} random bytes at a time`);
  if (offset + size > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const start = offset;
  offset += size;
  return pool.subarray(start, offset);
}

/** `size` random bytes, base64url without padding (RFC 4648 §5). */
export const randomBase64url = (size: number): string => take(size).toString('base64url');

/** `size` random bytes as lowercase hex. */
export const randomHex = (size: number): string => take(size).toString('hex');
