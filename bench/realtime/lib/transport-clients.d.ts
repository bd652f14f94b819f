import { type OnTimestamp } from './receive.ts';
/**
 * Engine subscribers for the transport and format rows (bench/realtime/transports.bench.ts), as cheap as the JSON
 * one in clients.ts: they find deliveries and their `ts` without decoding whole messages, answer pings, and report
 * the bytes they receive.
 */
export interface Receiver {
    onTimestamp: OnTimestamp;
    onBytes: (bytes: number) => void;
    /** A delivery whose payload carries no readable `ts` (a fossil delta). */
    onDelivery?: () => void;
}
interface Opened {
    close(): void;
}
/** An engine subscriber in `mode` (JSON over WebSocket is `openClient`'s own). */
export declare function openEngineClientIn(mode: 'protobuf' | 'http_stream' | 'delta', port: number, channel: string, token: string, receiver: Receiver): Promise<Opened>;
export {};
