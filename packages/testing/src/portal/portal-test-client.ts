import { type HttpResult, http } from '../http-client.ts';

/**
 * A signed-in portal browser for API tests: keeps the session cookie and the CSRF token like the SPA does, and
 * sends them on every request (or not, when a test says so).
 */
export class PortalTestClient {
  cookie = '';
  csrf = '';

  constructor(readonly baseUrl: string) {}

  async signIn(email: string, password: string): Promise<HttpResult> {
    const res = await http(`${this.baseUrl}/portal/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(this.cookie ? { cookie: this.cookie } : {}) },
      body: JSON.stringify({ email, password }),
    });
    const setCookie = res.headers.get('set-cookie');
    if (res.status === 200 && setCookie) {
      this.cookie = setCookie.split(';')[0]!;
      this.csrf = res.body.csrf_token;
    }
    return res;
  }

  request(
    method: string,
    path: string,
    body?: unknown,
    options: { csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<HttpResult> {
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    return http(`${this.baseUrl}/portal/api${path}`, {
      method,
      headers: {
        ...options.headers,
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(csrf ? { 'x-csrf-token': csrf } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  get = (path: string) => this.request('GET', path);
  post = (
    path: string,
    body: unknown = {},
    options?: { csrf?: string | null; headers?: Record<string, string> },
  ) => this.request('POST', path, body, options);
  put = (path: string, body: unknown, options?: { csrf?: string | null }) =>
    this.request('PUT', path, body, options);
  patch = (path: string, body: unknown, options?: { csrf?: string | null }) =>
    this.request('PATCH', path, body, options);
  del = (path: string, options?: { csrf?: string | null }) =>
    this.request('DELETE', path, undefined, options);
}
