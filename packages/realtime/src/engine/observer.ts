import type { TransportName } from './transport.ts';

/** What kind of frame a connection was sent: a command's reply, a ping, a shared push, or another push. */
export type SentFrameType = 'reply' | 'ping' | 'publication' | 'join' | 'leave' | 'push';

/**
 * Counters the engine reports as it works, for a host that exports metrics (Parley registers Prometheus metrics
 * from these, packages/server/src/metrics/realtime-metrics.ts): the engine itself depends on no metrics library.
 * Every label value is from a closed set (command methods, transport names, frame types, protocol error codes), so a
 * host's series stay bounded whatever clients send. Called synchronously on hot paths: keep implementations cheap.
 */
export interface RealtimeObserver {
  /** A command arrived (`method` is `unknown` for a command naming none the protocol has). */
  commandReceived(method: string, transport: TransportName): void;
  /** A command was handled; `errorCode` is the reply error's code (none when it succeeded). */
  commandHandled(method: string, seconds: number, errorCode: number | undefined): void;
  /** Frames were written to a connection. */
  framesSent(type: SentFrameType, transport: TransportName, count: number): void;
}
