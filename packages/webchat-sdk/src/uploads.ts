import type { AttachmentView } from '@parley/webchat-protocol';
import { WebchatError } from './errors.ts';
import type { FetchLike } from './fetch-like.ts';

/** An uploaded attachment, as the server answers an upload (the protocol's `AttachmentView`). */
export type Attachment = AttachmentView;

/** Upload progress: bytes of the file's request body sent so far, of `total`. */
export interface UploadProgress {
  loaded: number;
  total: number;
}

export interface UploadOptions {
  /** Called as the request body goes out (real transport progress, not an estimate). */
  onProgress?: (progress: UploadProgress) => void;
  /** A file name to send instead of the `File`'s own (a pasted image has none worth keeping). */
  name?: string;
  signal?: AbortSignal;
}

export interface UploadRequest {
  url: string;
  headers: Record<string, string>;
  form: FormData;
  options: UploadOptions;
  fetchFn: FetchLike;
}

/** The server's answer: status and body text, whichever way it was sent. */
export interface UploadResponse {
  status: number;
  text: string;
}

/**
 * Sends a multipart upload and reports real progress. In browsers through XMLHttpRequest, whose `upload.onprogress`
 * counts bytes handed to the network (fetch cannot report request-body progress over HTTP/1.1). Elsewhere (Node)
 * through `fetch` with a streamed body (`duplex: 'half'`), counting each chunk as the transport pulls it.
 */
export function sendUpload(request: UploadRequest): Promise<UploadResponse> {
  if (typeof XMLHttpRequest !== 'undefined') return sendWithXhr(request);
  return sendWithStreamingFetch(request);
}

function sendWithXhr({ url, headers, form, options }: UploadRequest): Promise<UploadResponse> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) options.onProgress?.({ loaded: event.loaded, total: event.total });
    };
    xhr.onload = () => resolve({ status: xhr.status, text: xhr.responseText });
    xhr.onerror = () => reject(new WebchatError('network_error', 'the upload could not reach the server'));
    xhr.onabort = () => reject(new WebchatError('aborted', 'the upload was cancelled'));
    options.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(form);
  });
}

async function sendWithStreamingFetch({
  url,
  headers,
  form,
  options,
  fetchFn,
}: UploadRequest): Promise<UploadResponse> {
  // Serialise the form once (Response knows the multipart encoding and its boundary), then stream it out.
  const encoded = new Response(form);
  const contentType = encoded.headers.get('content-type')!;
  const body = new Uint8Array(await encoded.arrayBuffer());
  const total = body.byteLength;
  const step = 64 * 1024;
  let loaded = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (loaded >= total) {
        controller.close();
        return;
      }
      const next = body.subarray(loaded, Math.min(total, loaded + step));
      loaded += next.byteLength;
      controller.enqueue(next);
      options.onProgress?.({ loaded, total });
    },
  });
  try {
    const response = await fetchFn(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': contentType, 'Content-Length': String(total) },
      body: stream,
      signal: options.signal,
      duplex: 'half',
    } as RequestInit);
    return { status: response.status, text: await response.text() };
  } catch (cause) {
    throw new WebchatError('network_error', 'the upload could not reach the server', { cause });
  }
}
