import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { attachmentTooLarge, attachmentTypeNotAllowed } from './attachments.errors.ts';
import { type AttachmentType, declaredTypeAgrees, SNIFF_BYTES, sniff } from './content-types.ts';

export interface InspectorRules {
  maxBytes: number;
  allowedTypes: ReadonlySet<string>;
  /** The part's declared Content-Type, if any. */
  declaredType: string | undefined;
}

/** What the inspector learned once the stream ended. */
export interface Inspected {
  contentType: AttachmentType;
  size: number;
  /** Lowercase hex. */
  sha256: string;
}

/**
 * Sits between the multipart file stream and the BlobStore and checks an upload while it streams, holding at most
 * SNIFF_BYTES of it: the first bytes are held back until they decide the type (so nothing of a refused file is
 * ever stored), then everything passes through. It fails the stream — and so the BlobStore's `put`, which keeps
 * nothing — as soon as the size passes `maxBytes` (413 `attachment_too_large`), the detected type is not allowed or
 * disagrees with the declared one (415 `attachment_type_not_allowed`), or a text file turns out not to be UTF-8 or
 * to hold NUL. The SHA-256 is computed on the way.
 */
export class UploadInspector extends Transform {
  private readonly hash: Hash = createHash('sha256');
  private head: Buffer[] = [];
  private headBytes = 0;
  private size = 0;
  private type: AttachmentType | undefined;
  private text: TextDecoder | undefined;

  constructor(private readonly rules: InspectorRules) {
    super();
  }

  /** Valid once the stream finished without error. */
  result(): Inspected {
    if (!this.type) throw new Error('the upload was not inspected to its end');
    return { contentType: this.type, size: this.size, sha256: this.hash.digest('hex') };
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.rules.maxBytes) {
      done(attachmentTooLarge(this.rules.maxBytes));
    } else if (this.type !== undefined) {
      this.hash.update(chunk);
      done(this.checkText(chunk), chunk);
    } else {
      this.hash.update(chunk);
      this.head.push(chunk);
      this.headBytes += chunk.length;
      if (this.headBytes < SNIFF_BYTES) done();
      else this.releaseHead(done);
    }
  }

  override _flush(done: TransformCallback): void {
    if (this.type !== undefined) {
      done(this.endText());
    } else if (this.headBytes === 0) {
      done(attachmentTypeNotAllowed('The file is empty.'));
    } else {
      // A file shorter than SNIFF_BYTES: its whole content decides.
      this.releaseHead((err, data) => {
        if (data) this.push(data);
        done(err ?? this.endText());
      });
    }
  }

  /** Decides the type from the held-back head and passes the head on. */
  private releaseHead(done: TransformCallback): void {
    const head = Buffer.concat(this.head, this.headBytes);
    this.head = [];
    const detected = sniff(head);
    if (detected === undefined || detected === 'text/html' || !this.rules.allowedTypes.has(detected)) {
      done(attachmentTypeNotAllowed(describeRefusal(detected)));
      return;
    }
    if (!declaredTypeAgrees(this.rules.declaredType, detected)) {
      done(
        attachmentTypeNotAllowed(
          `The file's content is ${detected}, not the declared ${this.rules.declaredType}.`,
        ),
      );
      return;
    }
    this.type = detected;
    if (detected === 'text/plain' || detected === 'image/svg+xml')
      this.text = new TextDecoder('utf-8', { fatal: true });
    done(this.checkText(head), head);
  }

  /** Text types stay valid UTF-8 without NUL to their end (a NUL or bad byte past the head is caught here). */
  private checkText(chunk: Buffer): Error | null {
    if (!this.text) return null;
    if (chunk.includes(0)) return attachmentTypeNotAllowed('A text file must not hold NUL characters.');
    try {
      this.text.decode(chunk, { stream: true });
      return null;
    } catch {
      return attachmentTypeNotAllowed('A text file must be valid UTF-8.');
    }
  }

  private endText(): Error | null {
    if (!this.text) return null;
    try {
      this.text.decode();
      return null;
    } catch {
      return attachmentTypeNotAllowed('A text file must be valid UTF-8.');
    }
  }
}

function describeRefusal(detected: string | undefined): string {
  if (detected === undefined) return 'The file is not of a type attachments may have.';
  return `Files of type ${detected} are not allowed here.`;
}
