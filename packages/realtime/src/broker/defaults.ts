/** Centrifugo keeps an idempotent publish result for 5 minutes unless told otherwise (`idempotent_result_ttl`). */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 5 * 60_000;

/**
 * Default `onHandlerError` of both brokers: an exception thrown by the engine's event handler must neither stop
 * delivery to other nodes nor make an already stored publish look failed, so it only becomes a process warning.
 */
export function reportHandlerErrorAsWarning(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(String(error)), 'BrokerHandlerError');
}
