/**
 * The whole body of an outbound call's response, or `undefined` once it is larger than `maxBytes` — declared in
 * `content-length` or counted while it streams, so a peer that lies about its length is cut off too. The rest of
 * an oversized body is never read. A connection that breaks mid-body rejects with the reader's error.
 */
export async function boundedBody(response: Response, maxBytes: number): Promise<Uint8Array | undefined> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    return undefined;
  }
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}

/** `boundedBody` as UTF-8 text. */
export async function boundedText(response: Response, maxBytes: number): Promise<string | undefined> {
  const body = await boundedBody(response, maxBytes);
  return body && Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
}
