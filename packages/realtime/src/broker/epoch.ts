import { randomInt } from 'node:crypto';

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * A new stream epoch: 8 random `[a-zA-Z]` letters, like Centrifuge's `internal/epoch`
 * (docs/protocol.md "Streams").
 */
export function newEpoch(): string {
  let epoch = '';
  for (let i = 0; i < 8; i++) epoch += LETTERS[randomInt(LETTERS.length)];
  return epoch;
}
