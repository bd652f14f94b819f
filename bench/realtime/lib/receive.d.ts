/** Reading what bench subscribers receive, equally cheap for every peer (the load generator shares the CPU). */
/** Called with the `ts` of every publication received (end-to-end latency). */
export type OnTimestamp = (ts: number) => void;
/**
 * Reports the `ts` of every publication in a received text without parsing the whole JSON: the load generator
 * shares the CPU with the server, so its per-message cost must stay small and equal for every peer.
 */
export declare function forEachTimestamp(text: string, onTimestamp: OnTimestamp): number;
/** A Centrifugo server ping is an empty reply `{}`, alone or as one line of a batched frame (docs/protocol.md "Ping and pong"). */
export declare function containsPing(text: string): boolean;
