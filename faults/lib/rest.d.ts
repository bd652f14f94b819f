export interface SdkSession {
    baseUrl: string;
    companyId: string;
    sessionId: string;
}
export interface RestAnswer<T> {
    status: number;
    body: T;
}
/** One SDK REST call, bounded to 5 s so a hung node shows up as an error instead of a stuck visitor. */
export declare function sdkCall<T>(session: SdkSession, method: 'GET' | 'POST', path: string, body?: unknown): Promise<RestAnswer<T>>;
/**
 * Calls until the answer has status `expected`, retrying what a well-behaved client retries (network errors, 5xx,
 * 429) with a growing pause; anything else, or `timeoutMs` spent, throws.
 */
export declare function retrySdkCall<T>(session: SdkSession, method: 'GET' | 'POST', path: string, body: unknown, expected: number, timeoutMs?: number): Promise<T>;
