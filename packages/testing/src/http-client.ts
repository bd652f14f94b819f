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
