import { connect } from 'node:net';
import { deflateSync } from 'node:zlib';
import { http } from '../http-client.ts';
import type { TestServer } from '../test-server.ts';
import type { Visitor } from './webchat-fixtures.ts';

/** A real, valid PNG of `width`×`height` pixels of one colour (signature, IHDR, IDAT, IEND; PNG spec §5). */
export function pngOf(width = 2, height = 2, rgb: [number, number, number] = [200, 30, 30]): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(8 + data.length + 4);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
);

/** A multipart body with one `file` part (what a browser's FormData sends). */
export function fileForm(bytes: Uint8Array, name: string, type: string, field = 'file'): FormData {
  const form = new FormData();
  form.append(field, new Blob([Uint8Array.from(bytes)], { type }), name);
  return form;
}

export const sdkUpload = (server: TestServer, v: Visitor, conversationId: string, form: FormData) =>
  http(`${server.baseUrl}/sdk/v1/conversations/${conversationId}/attachments`, {
    method: 'POST',
    headers: v.headers,
    body: form,
  });

export const platformUpload = (server: TestServer, token: string, conversationId: string, form: FormData) =>
  http(`${server.baseUrl}/platform/v1/conversations/${conversationId}/attachments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });

/** Downloads a signed link as bytes, with its headers. */
export async function download(url: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/**
 * Sends a hand-built multipart body over a raw socket, written at once (so it has fully arrived before the handler
 * reads it), and resolves with the status and JSON body — or `status: 0` when no answer came within `timeoutMs`.
 */
export function rawSdkUpload(
  server: TestServer,
  v: Visitor,
  conversationId: string,
  body: Buffer,
  boundary: string,
  timeoutMs = 10_000,
): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  return new Promise((resolve) => {
    const headers = Object.entries(v.headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const socket = connect(Number(new URL(server.baseUrl).port), '127.0.0.1', () =>
      socket.write(
        Buffer.concat([
          Buffer.from(
            `POST /sdk/v1/conversations/${conversationId}/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}` +
              `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n` +
              'Connection: close\r\n\r\n',
            'latin1',
          ),
          body,
        ]),
      ),
    );
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', rest = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1] ?? 0) || 0, body: rest ? JSON.parse(rest) : undefined });
    });
  });
}
