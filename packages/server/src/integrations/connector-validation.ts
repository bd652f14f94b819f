import { InvalidConnectorError } from './connectors.errors.ts';

/** Input rules for connectors, shared by the service (CLI), the API schemas and docs/errors.md. */

export const CONNECTOR_NAME_MAX = 200;
export const CONNECTOR_URL_MAX = 2048;
/** Longest accepted API key (bytes = characters: keys are visible ASCII). Documented in docs/errors.md. */
export const API_KEY_MAX = 4096;
/**
 * Visible ASCII only (0x21–0x7E): no whitespace or control characters. Every accepted key can travel in an
 * `Authorization: Bearer` header unchanged (RFC 9110 §5.5 field values; RFC 6750 §2.1 b64token is narrower still).
 */
export const API_KEY_PATTERN = '^[\\x21-\\x7E]+$';
const API_KEY_RE = new RegExp(API_KEY_PATTERN);

// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f]/;

export function validateName(value: string): string {
  const name = value.trim();
  if (name.length === 0 || name.length > CONNECTOR_NAME_MAX || CONTROL.test(name)) {
    throw new InvalidConnectorError(
      'invalid_name',
      'name',
      `must be 1 to ${CONNECTOR_NAME_MAX} characters without control characters`,
    );
  }
  return name;
}

/** An absolute http(s) URL without credentials or fragment (a URL is listed to API clients; it must hold no secret). */
export function validateUrl(value: string | undefined): string {
  if (value === undefined || value.trim() === '')
    throw new InvalidConnectorError('invalid_url', 'url', 'is required for this type');
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new InvalidConnectorError('invalid_url', 'url', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidConnectorError('invalid_url', 'url', 'must use http or https');
  }
  if (url.username || url.password) {
    throw new InvalidConnectorError(
      'invalid_url',
      'url',
      'must not contain credentials (set the API key instead)',
    );
  }
  if (url.hash) throw new InvalidConnectorError('invalid_url', 'url', 'must not contain a fragment');
  if (url.href.length > CONNECTOR_URL_MAX) {
    throw new InvalidConnectorError('invalid_url', 'url', `must be at most ${CONNECTOR_URL_MAX} characters`);
  }
  return url.href;
}

export function validateApiKey(value: unknown): asserts value is string {
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > API_KEY_MAX ||
    !API_KEY_RE.test(value)
  ) {
    throw new InvalidConnectorError(
      'invalid_api_key',
      'api_key',
      `must be 1 to ${API_KEY_MAX} visible ASCII characters (no whitespace or control characters)`,
    );
  }
}
