import type { Page, SessionInfo } from '@parley/wire-types';

// The portal API's answers are declared once, with the server (packages/wire-types).
export type { Page, SessionInfo };
/** A problem+json answer (RFC 9457) from the portal API, with the field errors the forms show inline. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly fieldErrors: Array<{ field: string; message: string }> = [],
    readonly retryAfter?: number,
  ) {
    super(detail);
  }
}

let csrfToken = '';
let onSignedOut: () => void = () => {};

export function useSession(session: SessionInfo | undefined): void {
  csrfToken = session?.csrf_token ?? '';
}

/** Called when the API says the session is gone (expired, signed out elsewhere). */
export function onSessionLost(fn: () => void): void {
  onSignedOut = fn;
}

/**
 * Every portal API call. State-changing methods carry the session's CSRF token in `X-CSRF-Token` (the server's
 * synchronizer-token check); the session cookie itself is httpOnly and travels on its own. A `FormData` body goes
 * as `multipart/form-data` (fetch sets the boundary), any other body as JSON.
 */
export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const multipart = body instanceof FormData;
  if (body !== undefined && !multipart) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(`/portal/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : multipart ? body : JSON.stringify(body),
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let data: (Record<string, unknown> & { code?: string; detail?: string; errors?: unknown }) | undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!response.ok) {
    const error = new ApiError(
      response.status,
      data?.code ?? 'http_error',
      data?.detail ?? `The server answered ${response.status}.`,
      Array.isArray(data?.errors) ? (data.errors as Array<{ field: string; message: string }>) : [],
      Number(response.headers.get('retry-after')) || undefined,
    );
    if (response.status === 401 && path !== '/session') onSignedOut();
    throw error;
  }
  return data as T;
}

/**
 * Uploads one file as `multipart/form-data` (part `file`) through `api`: the parsed body, or an ApiError with the
 * problem's code (e.g. `attachment_too_large`, `attachment_type_not_allowed`); a lost session signs out as anywhere.
 */
export function upload<T = unknown>(path: string, file: File): Promise<T> {
  const form = new FormData();
  form.append('file', file, file.name);
  return api<T>('POST', path, form);
}

export const pageQuery = (offset: number, limit: number): string => `limit=${limit}&offset=${offset}`;
