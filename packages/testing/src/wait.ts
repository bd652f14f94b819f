// Waiting in tests, faults/ and bench/: waitFor… waits and throws on timeout (README "Development" names the other
// helper prefixes). Pauses use node's own `setTimeout` from node:timers/promises.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` until it returns a value (not undefined or false), and returns that value; throws naming `what`
 * once `timeoutMs` has passed.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** What `promise` settles with; throws naming `what` when it has not settled within `ms`. */
export async function waitForSettled<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
