import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Sealer } from '../../crypto/sealing.ts';

/** How long a signed link works (docs/design.md "Attachments"). */
export const LINK_TTL_SECONDS = 3600;

/** Where downloads are served: no headers needed, so an `<img src>` can load the link. */
export const DOWNLOAD_PATH_PREFIX = '/webchat/attachments/';

/** The query of a signed link: `expires` (Unix seconds) and `signature` (`<master version>.<base64url HMAC>`). */
export interface LinkQuery {
  expires?: string;
  signature?: string;
}

/**
 * Signed download links. The signature is HMAC-SHA256 over `attachment|<id>|<expires>` keyed with a key derived
 * from the master key (crypto/sealing.ts `derivedKey`, purpose `attachment-links`), so every node of a cluster signs
 * and verifies alike with no new secret, and a master-key rotation keeps older links working until they expire
 * (the signature names the master version). `now` is injectable so tests replay a link past its expiry.
 */
export class AttachmentLinks {
  constructor(
    private readonly sealer: Sealer,
    private readonly now: () => number = Date.now,
  ) {}

  /** The path and query of a fresh link to attachment `id` (prefix it with the public URL). */
  pathFor(id: string, issuedAtMs: number = this.now()): string {
    const expires = Math.floor(issuedAtMs / 1000) + LINK_TTL_SECONDS;
    const derived = this.sealer.derivedKey('attachment-links')!;
    const mac = this.mac(derived.key, id, expires);
    return `${DOWNLOAD_PATH_PREFIX}${id}?expires=${expires}&signature=${derived.version}.${mac}`;
  }

  /** Whether `query` is a valid, unexpired signature for attachment `id`. */
  verify(id: string, query: LinkQuery): boolean {
    const expires = Number(query.expires);
    if (!/^\d{1,12}$/.test(query.expires ?? '') || expires * 1000 <= this.now()) return false;
    const match = /^(\d{1,6})\.([A-Za-z0-9_-]{43})$/.exec(query.signature ?? '');
    if (!match) return false;
    const derived = this.sealer.derivedKey('attachment-links', Number(match[1]));
    if (!derived) return false;
    const expected = Buffer.from(this.mac(derived.key, id, expires), 'utf8');
    const given = Buffer.from(match[2]!, 'utf8');
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  private mac(key: Buffer, id: string, expires: number): string {
    return createHmac('sha256', key).update(`attachment|${id}|${expires}`).digest('base64url');
  }
}
