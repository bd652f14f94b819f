/** Small fetch helpers for tests: parsed JSON plus status and headers, nothing hidden. */
export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function http<T = any>(url: string, init: RequestInit = {}): Promise<HttpResult<T>> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: tests assert on `text`.
  }
  return { status: response.status, headers: response.headers, body: body as T, text };
}

export const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** A platform API call (`/platform/v1{path}`) with a bearer header and a JSON body, a FormData, or none. */
export function platformCall(
  baseUrl: string,
  auth: Record<string, string>,
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpResult> {
  const form = body instanceof FormData;
  return http(`${baseUrl}/platform/v1${path}`, {
    method,
    headers: { ...auth, ...(body === undefined || form ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: form ? body : JSON.stringify(body) }),
  });
}
