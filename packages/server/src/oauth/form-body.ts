import { invalidRequest } from './oauth-errors.ts';

/** Parameters of an `application/x-www-form-urlencoded` body; a null-prototype object (no `__proto__` tricks). */
export type FormParams = Record<string, string>;

/**
 * Parses a form body as RFC 6749 §3.2 and App. B ask: `+` is a space and `%XX` a byte (malformed escapes are an
 * `invalid_request`, not silently kept); a parameter given twice is an `invalid_request` (§3.1 "MUST NOT be
 * included more than once"); a parameter without a value is treated as omitted (§3.1).
 */
export function parseForm(body: string): FormParams {
  const params: FormParams = Object.create(null);
  const seen = new Set<string>();
  for (const pair of body.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = formDecode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : formDecode(pair.slice(eq + 1));
    if (seen.has(name)) throw invalidRequest(`The parameter ${safeName(name)} is given more than once.`);
    seen.add(name);
    if (value !== '') params[name] = value;
  }
  return params;
}

/** application/x-www-form-urlencoded decoding of one name or value (also used for Basic credentials). */
export function formDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw invalidRequest('The request contains a malformed percent-encoding.');
  }
}

/** Echo a parameter name only when it is harmless (error_description is limited to a safe ASCII subset). */
const safeName = (name: string): string => (/^[A-Za-z0-9_.-]{1,40}$/.test(name) ? name : '(unnamed)');
