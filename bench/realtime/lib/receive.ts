/** Reading what bench subscribers receive, equally cheap for every peer (the load generator shares the CPU). */

/** Called with the `ts` of every publication received (end-to-end latency). */
export type OnTimestamp = (ts: number) => void;

const TS_KEY = '"ts":';

/**
 * Reports the `ts` of every publication in a received text without parsing the whole JSON: the load generator
 * shares the CPU with the server, so its per-message cost must stay small and equal for every peer.
 */
export function forEachTimestamp(text: string, onTimestamp: OnTimestamp): number {
  let found = 0;
  for (let at = text.indexOf(TS_KEY); at >= 0; at = text.indexOf(TS_KEY, at + TS_KEY.length)) {
    onTimestamp(Number.parseFloat(text.slice(at + TS_KEY.length, at + TS_KEY.length + 24)));
    found++;
  }
  return found;
}

/** A Centrifugo server ping is an empty reply `{}`, alone or as one line of a batched frame (docs/protocol.md "Ping and pong"). */
export function containsPing(text: string): boolean {
  return text === '{}' || text.startsWith('{}\n') || text.endsWith('\n{}') || text.includes('\n{}\n');
}
