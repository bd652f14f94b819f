import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BuiltinAnswer } from '@parley/server/internal/digital-employees/digital-employees.settings';
import type { TestServer } from '../test-server.ts';

/**
 * An integrator's site for widget tests: a web server of its own on 127.0.0.1 (another origin than Parley's) that
 * serves the pages a test sets, with the headers it sets (a Content-Security-Policy, say), and collects the CSP
 * violation reports browsers send to `/csp-report`.
 */
export interface TestSite {
  url: string;
  /** Serves `html` at `path` with `headers`. */
  setPage(path: string, html: string, headers?: Record<string, string>): void;
  /** CSP reports received (the `csp-report` objects of `report-uri`). */
  readonly reports: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startSite(): Promise<TestSite> {
  const pages = new Map<string, { html: string; headers: Record<string, string> }>();
  const reports: Array<Record<string, unknown>> = [];
  const server: Server = createServer((request, response) => {
    if (request.url === '/csp-report' && request.method === 'POST') {
      void readBody(request).then((body) => {
        try {
          const parsed = JSON.parse(body) as { 'csp-report'?: Record<string, unknown> };
          reports.push(parsed['csp-report'] ?? parsed);
        } catch {
          reports.push({ unparsed: body });
        }
        response.writeHead(204).end();
      });
      return;
    }
    const page = pages.get(request.url ?? '');
    if (!page) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...page.headers }).end(page.html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setPage: (path, html, headers = {}) => pages.set(path, { html, headers }),
    reports,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The strict policy of the widget's contract (docs: the widget README, "Content-Security-Policy"):
 * `default-src 'self'; script-src {parley}; style-src 'self'; connect-src {parley} {realtime}; img-src {parley} data:`,
 * with `extraStyle` added to style-src (a nonce, or Parley's origin for old browsers) and reports to the site.
 */
export function strictPolicy(parley: string, realtime: string, extraStyle = ''): string {
  return [
    "default-src 'self'",
    `script-src ${parley}`,
    `style-src 'self'${extraStyle ? ` ${extraStyle}` : ''}`,
    `connect-src ${parley} ${realtime}`,
    `img-src ${parley} data:`,
    'report-uri /csp-report',
  ].join('; ');
}

/** A page of the site with `body` (the embed), no inline script or style, in `lang` (`null`: none said). */
export function sitePage(body: string, lang: string | null = 'en'): string {
  return `<!doctype html><html${lang ? ` lang="${lang}"` : ''}><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover"><title>Example shop</title></head>
<body><main><h1>Example shop</h1><p>Shoes, socks and laces.</p></main>
${body}
</body></html>`;
}

/**
 * A company of its own whose widget channel allows `siteUrl`, with a builtin digital employee that answers from
 * `answers` (quick replies included) word by word every `wordDelayMs`, and greets with `greeting`.
 */
export async function widgetCompany(
  server: TestServer,
  siteUrl: string,
  settings: {
    greeting?: string | null;
    answers?: BuiltinAnswer[];
    fallback?: string;
    wordDelayMs?: number;
  } = {},
): Promise<{ companyId: string; channelId: string }> {
  const companyId = (await server.ctx.companies.create('Shoe Shop')).id;
  const employee = await server.ctx.digitalEmployees.create({
    companyId,
    name: 'Ava',
    responder: 'builtin',
    settings: {
      greeting: settings.greeting === undefined ? 'Hi, I am Ava. How can I help?' : settings.greeting,
      word_delay_ms: settings.wordDelayMs ?? 5,
      answers: settings.answers ?? [],
      ...(settings.fallback ? { fallback: settings.fallback } : {}),
    },
  });
  await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
  const channel = await server.ctx.webchat.channels.create({
    companyId,
    name: 'Shop',
    digitalEmployeeId: employee.id,
    allowedOrigins: [siteUrl],
  });
  return { companyId, channelId: channel.id };
}

/** The widget's realtime origin as the server names it (`GET /sdk/v1/config`): the CSP's connect-src needs it. */
export async function realtimeOrigin(server: TestServer): Promise<string> {
  const config = (await (
    await fetch(`${server.baseUrl}/sdk/v1/config`, { headers: { 'x-company': crypto.randomUUID() } })
  ).json()) as { realtime_url?: string };
  return new URL(config.realtime_url ?? server.baseUrl.replace(/^http/, 'ws')).origin.replace(/^http/, 'ws');
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    request.on('data', (chunk) => (body += String(chunk)));
    request.on('end', () => resolve(body));
  });
}
