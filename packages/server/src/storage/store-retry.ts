import { isStoreUnavailable } from './store-errors.ts';

/** Pauses between attempts while the store is away: quick at first, then every 2 s. */
const RETRY_DELAYS_MS = [250, 500, 1_000, 2_000];

export interface StoreWait {
  /** Gives up once the store has been away this long (from the first failure). */
  waitMs: number;
  /** Gives up at once when this aborts (the node is shutting down). */
  signal?: AbortSignal;
  /** Told about the first failure of a wait (to log it once). */
  onWaiting?: (error: unknown) => void;
}

/**
 * Runs `attempt`, and again while it fails because the store is unavailable (storage/store-errors.ts) — a restart,
 * a failover, a full disk — until it succeeds, `waitMs` passed or `signal` aborted. For work that must not be lost
 * to a short outage and has nobody to retry it for it (a streamed reply's completion); callers that answer a client
 * answer 503 instead. Any other error, or the last one when giving up, is thrown.
 */
export async function untilStoreAnswers<T>(attempt: () => Promise<T>, wait: StoreWait): Promise<T> {
  let since: number | undefined;
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isStoreUnavailable(error) || wait.signal?.aborted) throw error;
      since ??= Date.now();
      if (tries === 0) wait.onWaiting?.(error);
      const delay = RETRY_DELAYS_MS[Math.min(tries, RETRY_DELAYS_MS.length - 1)]!;
      if (Date.now() + delay - since > wait.waitMs) throw error;
      await pause(delay, wait.signal);
      if (wait.signal?.aborted) throw error;
    }
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
