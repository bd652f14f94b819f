import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Scope } from '@parley/server/internal/oauth/principal';
import { type HttpResult, platformCall } from '../http-client.ts';
import { createBearerTenant } from '../oauth/oauth-fixtures.ts';
import type { TestServer } from '../test-server.ts';

/** A company with an API client holding the knowledge scopes (or those given), and its bearer header. */
export async function knowledgeTenant(
  server: TestServer,
  scopes: Scope[] = ['knowledge:read', 'knowledge:write'],
) {
  return createBearerTenant(server, scopes);
}

/** A call to `/platform/v1/knowledge{path}` with a JSON body (or a FormData / none). */
export function knowledgeApi(
  server: TestServer,
  auth: Record<string, string>,
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpResult> {
  return platformCall(server.baseUrl, auth, method, `/knowledge${path}`, body);
}

/**
 * A text source that no question with "kvk" finds until the company's synonyms say "kvk" = "chamber of commerce"
 * (docs/knowledge.md "Company synonyms"): the CLI's and the portal's synonym tests add it.
 */
export const LEGAL_SOURCE = {
  kind: 'text',
  title: 'Legal',
  content: '# Legal\n\nListed with the Chamber of Commerce under 12345678.',
} as const;

export const RETURNS_ARTICLE = `# Returns and refunds

How returns work at Fernwood Books.

## Returning an item

You can return any book within 30 days of delivery. Print the prepaid label from your account and drop the parcel
at any post office.

## Refunds

Once the parcel arrives at our warehouse, the refund is paid to your original payment method within five working
days. Shipping costs are refunded only when the book was damaged.
`;

export const SHIPPING_ARTICLE = `<html><head><title>Shipping</title></head><body>
<h1>Shipping</h1>
<h2>Delivery times</h2>
<p>Orders placed before 2 pm are dispatched the same day. Domestic delivery takes two to three days.</p>
<h2>International shipping</h2>
<p>We ship to 40 countries; customs duties are paid by the recipient &amp; depend on the destination.</p>
</body></html>`;

/**
 * A one-page PDF (ISO 32000-1 §7: header, objects, cross-reference table, trailer) whose page shows `lines` in
 * Helvetica, built here so the test needs no binary fixture. Byte offsets in the xref table are computed.
 */
export function pdfWith(lines: string[]): Buffer {
  const escapeText = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const text = lines
    .map((line, i) => `BT /F1 12 Tf 72 ${720 - i * 18} Td (${escapeText(line)}) Tj ET`)
    .join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(text)} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(body));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** A local web server (127.0.0.1) that serves the given pages by path; `hits` counts requests per path. */
export async function startPageServer(
  pages: Record<string, { type: string; body: string | Buffer; status?: number }>,
): Promise<{ url: string; hits: Map<string, number>; pages: typeof pages; close(): Promise<void> }> {
  const hits = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const page = pages[path];
    if (!page) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    response.writeHead(page.status ?? 200, { 'content-type': page.type }).end(page.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    pages,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
