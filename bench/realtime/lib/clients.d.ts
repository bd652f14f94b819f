import { type OnTimestamp } from './receive.ts';
import { type ServerKind } from './servers.ts';
/** A subscriber connection of the load generator; `onTimestamp` gets the `ts` of every publication received. */
export interface BenchClient {
    close(): void;
}
export type { OnTimestamp } from './receive.ts';
/** Bytes of each message or chunk received (WebSocket payload, HTTP body chunk), for bytes per delivery. */
export type OnBytes = (bytes: number) => void;
/**
 * How an engine subscriber speaks (bench/realtime/transports.bench.ts): JSON or Protobuf over WebSocket, JSON over
 * HTTP-streaming, or JSON over WebSocket with fossil deltas.
 */
export type EngineMode = 'json' | 'protobuf' | 'http_stream' | 'delta';
export declare function openClient(kind: ServerKind, port: number, channel: string, user: string, onTimestamp: OnTimestamp, onBytes?: OnBytes, mode?: EngineMode, onDelivery?: () => void): Promise<BenchClient>;
