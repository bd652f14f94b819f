import { setTimeout as sleep } from 'node:timers/promises';
// The visitor side of the webchat REST API (`/sdk/v1`, session headers), as a browser calls it through the balancer.

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
export async function sdkCall<T>(
  session: SdkSession,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<RestAnswer<T>> {
  const res = await fetch(`${session.baseUrl}/sdk/v1${path}`, {
    method,
    headers: {
      'x-session-id': session.sessionId,
      'x-company': session.companyId,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text for the error message
  }
  return { status: res.status, body: parsed as T };
}

/**
 * Calls until the answer has status `expected`, retrying what a well-behaved client retries (network errors, 5xx,
 * 429) with a growing pause; anything else, or `timeoutMs` spent, throws.
 */
export async function retrySdkCall<T>(
  session: SdkSession,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  expected: number,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let pause = 200;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const answer = await sdkCall<T>(session, method, path, body);
      if (answer.status === expected) return answer.body;
      last = `${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;
      if (answer.status < 500 && answer.status !== 429) break;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(pause);
    pause = Math.min(pause * 2, 2_000);
  }
  throw new Error(`${method} /sdk/v1${path}: ${last}`);
}
