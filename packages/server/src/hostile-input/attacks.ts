/**
 * What a hostile client sends (docs/design.md "JSON nesting", docs/errors.md "Common (all problem+json routes)"):
 * the catalog the hostile-input suites try on every route and every realtime command. Each attack is data, so a new
 * kind of input is one more entry here and every route meets it.
 *
 * Slow bodies and slow headers (bytes trickled, uploads stalled) are a family of their own, TIMED_ATTACKS below:
 * what matters is not the payload but that it never ends, so they meet the edge's header and body time-outs
 * (src/http/time-limits.ts) with raw-http.ts `trickleRequest`, in packages/testing/src/hostile-input/hostile-timed.suite.ts.
 */

/** Arrays and objects alternating, `depth` levels, written as text (a value this deep could not be serialised). */
export function nestedJson(depth: number): string {
  const pairs = Math.floor(depth / 2);
  const odd = depth % 2 === 1;
  return `${'[{"a":'.repeat(pairs)}${odd ? '[' : ''}1${odd ? ']' : ''}${'}]'.repeat(pairs)}`;
}

/** Just over the limit, a few thousand levels (the one that used to overflow the stack), and very deep. */
export const DEPTHS = [65, 4_000, 100_000] as const;

/** JSON text escapes: the parser turns them into U+0000 and an unpaired surrogate. */
const NUL = '\\u0000';
const LONE = '\\ud800';

/** The field names routes read, each given the same hostile value: every schema meets it somewhere. */
const FIELDS = [
  'name',
  'email',
  'password',
  'content',
  'text',
  'title',
  'description',
  'url',
  'api_key',
  'shortcut',
  'mode',
  'type',
  'conversation_id',
  'message_id',
  'option_id',
  'label',
  'comment',
  'rating',
  'status',
  'assignee_id',
  'user_id',
  'scopes',
  'events',
  'origins',
  'allowed_origins',
  'blocks',
  'author',
  'settings',
  'quick_replies',
  'available',
  'max_bytes',
  'allowed_types',
  'business_hours',
];

/** An object holding `value` (JSON text) under every field name routes read. */
const everyField = (value: string): string => `{${FIELDS.map((f) => `"${f}":${value}`).join(',')}}`;

export interface BodyAttack {
  name: string;
  contentType: string;
  body: Buffer;
  /** Hundreds of kilobytes: sent to the routes that read a body (POST, PUT, PATCH, DELETE), not to every GET. */
  heavy?: true;
}

const json = (name: string, text: string): BodyAttack => ({
  name,
  contentType: 'application/json',
  body: Buffer.from(text, 'utf8'),
  ...(text.length > 64 * 1024 ? { heavy: true as const } : {}),
});

/** Bodies, sent to every route that takes one (and to those that do not: a body nobody expects). */
export const BODY_ATTACKS: BodyAttack[] = [
  ...DEPTHS.map((d) => json(`body nested ${d} levels`, nestedJson(d))),
  json('a field nested 65 levels', everyField(nestedJson(65))),
  json('U+0000 in every field', everyField(`"a${NUL}b"`)),
  json('an unpaired surrogate in every field', everyField(`"a${LONE}b"`)),
  json('U+0000 in a key', `{"a${NUL}":1,"blocks":[{"type${NUL}":"markdown"}]}`),
  json('an unpaired surrogate in a key', `{"${LONE}":1,"author":{"na${LONE}me":"x"}}`),
  json('unsafe text inside blocks', `{"blocks":[{"type":"markdown","content":"${LONE}${NUL}"}]}`),
  json('numbers out of range in every field', everyField('1e400')),
  json('negative numbers in every field', everyField('-1')),
  json('arrays in every field', everyField('[[],[{}]]')),
  json('null in every field', everyField('null')),
  json(
    'a 900 KB string in every field of three',
    `{"name":"${'x'.repeat(300_000)}","content":"${'y'.repeat(300_000)}","url":"${'z'.repeat(300_000)}"}`,
  ),
  json('an array of 100,000 items', `{"blocks":[${Array(100_000).fill('{}').join(',')}]}`),
  json('a body over the 1 MiB limit', `{"content":"${'x'.repeat(1024 * 1024)}"}`),
  json('a top-level array', '[1,2,3]'),
  json('a top-level string', '"text"'),
  json('a top-level number', '12345678901234567890'),
  json('a top-level null', 'null'),
  json('malformed JSON', '{"content": "unterminated'),
  json('an empty body with a JSON type', ''),
  json('__proto__ and constructor keys', '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}'),
  {
    name: 'bytes that are not UTF-8 (an encoded surrogate, 0xFF)',
    contentType: 'application/json',
    body: Buffer.concat([
      Buffer.from('{"content":"', 'latin1'),
      Buffer.from([0xed, 0xa0, 0x80, 0xff]),
      Buffer.from('"}'),
    ]),
  },
  {
    name: 'a form body with U+0000 and an encoded surrogate',
    contentType: 'application/x-www-form-urlencoded',
    body: Buffer.from('grant_type=client_credentials%00&client_id=%ED%A0%80&scope=a%00b'),
  },
  {
    name: 'a JSON body under a charset JSON does not use',
    contentType: 'application/json; charset=utf-16',
    body: Buffer.from('{"content":"x"}'),
  },
  {
    name: 'a multipart body with unsafe names',
    contentType: 'multipart/form-data; boundary=XX',
    body: Buffer.from(
      '--XX\r\nContent-Disposition: form-data; name="file"; filename="a\u0000b.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n' +
        `--XX\r\nContent-Disposition: form-data; name="${'['.repeat(4000)}"\r\n\r\nv\r\n--XX--\r\n`,
      'utf8',
    ),
  },
  {
    name: 'an unknown content type',
    contentType: 'application/x-hostile',
    body: Buffer.from(nestedJson(4000)),
  },
];

export interface HeaderAttack {
  name: string;
  headers: Array<[string, string | Buffer]>;
}

/** The headers routes read, each given the hostile value (and a header no route reads). */
const READ_HEADERS = [
  'x-session-id',
  'x-company',
  'x-channel-id',
  'x-visitor-token',
  'x-request-id',
  'x-csrf-token',
  'idempotency-key',
  'origin',
  'x-hostile',
];

const inEveryHeader = (value: string | Buffer): Array<[string, string | Buffer]> =>
  READ_HEADERS.map((h) => [h, value]);

/** A compact JWS whose payload nests `depth` levels (unsigned: it must be refused before its signature matters). */
const deepJwt = (depth: number) =>
  `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(nestedJson(depth)).toString('base64url')}.c2ln`;

/** Headers, sent with every route's request (on top of the route's own credentials, which they replace). */
export const HEADER_ATTACKS: HeaderAttack[] = [
  { name: 'JSON nested 65 levels in every header', headers: inEveryHeader(nestedJson(65)) },
  { name: 'JSON nested 4,000 levels in a header', headers: [['x-hostile', nestedJson(4_000)]] },
  { name: 'U+0000 in every header', headers: inEveryHeader('a\u0000b') },
  { name: 'UTF-8 of a surrogate in every header', headers: inEveryHeader(Buffer.from([0xed, 0xa0, 0x80])) },
  {
    name: 'latin1 and control bytes in every header',
    headers: inEveryHeader(Buffer.from([0xff, 0x01, 0x7f])),
  },
  {
    name: 'a bearer token nesting 4,000 levels',
    headers: [['authorization', `Bearer ${deepJwt(4_000)}`]],
  },
  { name: 'a visitor token nesting 4,000 levels', headers: [['x-visitor-token', deepJwt(4_000)]] },
  {
    name: 'a cookie of garbage',
    headers: [['cookie', `parley_session=${'%'.repeat(300)}; a=${nestedJson(65)}`]],
  },
  { name: 'headers over the size limit', headers: [['x-hostile', 'x'.repeat(20_000)]] },
  { name: 'a content type of garbage', headers: [['content-type', `${nestedJson(65)}/${'x'.repeat(300)}`]] },
];

/** Query strings, appended to every route's path. */
export const QUERY_ATTACKS: Array<{ name: string; query: string }> = [
  {
    name: 'U+0000 in every usual parameter',
    query: queryOf(['limit', 'cursor', 'before', 'q', 'status', 'type', 'subject', 'offset'], '%00'),
  },
  { name: 'an encoded surrogate', query: 'q=%ED%A0%80&cursor=%ED%A0%80' },
  { name: 'a malformed escape', query: 'q=%zz&limit=%' },
  { name: 'numbers out of range', query: 'limit=99999999999999999999999&offset=-1&before=1e400' },
  {
    name: 'a cursor that decodes to JSON nested 4,000 levels',
    query: `cursor=${Buffer.from(nestedJson(4_000)).toString('base64url')}&before=${Buffer.from(nestedJson(4_000)).toString('base64url')}`,
  },
  { name: 'a search of 4,000 brackets', query: `q=${encodeURIComponent(nestedJson(4_000))}` },
  { name: 'U+0000 in a key', query: '%00=1&a%00b=2' },
  { name: 'bracketed keys', query: 'a[b][c]=1&limit[]=1&limit[]=2' },
  {
    name: 'SSE connect command nesting 4,000 levels',
    query: `cf_connect=${encodeURIComponent(`{"id":1,"connect":{"data":${nestedJson(4_000)}}}`)}`,
  },
];

function queryOf(names: string[], value: string): string {
  return names.map((n) => `${n}=${value}`).join('&');
}

/** Path parameter values (already percent-encoded), put in place of each route's parameters. */
export const PATH_ATTACKS: Array<{ name: string; value: string }> = [
  { name: 'U+0000', value: '%00' },
  { name: 'an encoded surrogate', value: '%ED%A0%80' },
  { name: 'an overlong UTF-8 slash', value: '%C0%AF' },
  { name: 'a malformed escape', value: '%zz' },
  { name: 'a parameter over 100 characters', value: 'x'.repeat(101) },
  { name: 'an emoji', value: '%F0%9F%98%80' },
  { name: 'dot segments', value: '..%2F..%2Fetc' },
  { name: 'brackets of JSON', value: encodeURIComponent(nestedJson(40)) },
];

/** Realtime: hostile values for every field of every command (JSON text, for the JSON protocol). */
export const REALTIME_VALUES: Array<{ name: string; json: string }> = [
  ...DEPTHS.filter((d) => d < 20_000).map((d) => ({ name: `nested ${d} levels`, json: nestedJson(d) })),
  // As deep as a 64 KiB frame holds: arrays only, two bytes a level (`JSON.stringify` overflows near 8,000).
  { name: 'arrays nested 30,000 levels', json: `${'['.repeat(30_000)}${']'.repeat(30_000)}` },
  { name: 'U+0000', json: `"a${NUL}b"` },
  { name: 'an unpaired surrogate', json: `"a${LONE}b"` },
  { name: 'a key with U+0000 and a surrogate', json: `{"a${NUL}":{"${LONE}":1}}` },
  { name: 'a 40 KB string', json: `"${'x'.repeat(40_000)}"` },
  { name: 'a number out of range', json: '1e400' },
  { name: 'a negative number', json: '-1' },
  { name: 'a huge integer', json: '123456789012345678901234567890' },
  { name: 'an array', json: '[1,[2,[3]]]' },
  { name: 'an object', json: '{"a":{"b":{}}}' },
  { name: 'null', json: 'null' },
  { name: 'true', json: 'true' },
  { name: 'an empty string', json: '""' },
];

/**
 * Timed attacks: the bytes a slow client sends at once, then one more byte (`trickle`) at a time, for ever. `start`
 * gets the request line's method and target and the header lines every request of the suite carries (credentials);
 * `perRoute` attacks are tried on every route (what reads a body is the route), the others on one (headers are read
 * before any route is chosen).
 */
export interface TimedAttack {
  name: string;
  perRoute: boolean;
  start(method: string, target: string, headerLines: string): string;
  trickle: string;
}

const UPLOAD_BOUNDARY = 'hostile-upload';

export const TIMED_ATTACKS: TimedAttack[] = [
  {
    name: 'a connection that sends nothing',
    perRoute: false,
    start: () => '',
    trickle: '',
  },
  {
    name: 'headers that never end',
    perRoute: false,
    start: (method, target) => `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `,
    trickle: 'x',
  },
  {
    name: 'a JSON body of 1 MiB that stalls after 1 KiB',
    perRoute: true,
    start: (method, target, headerLines) =>
      `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headerLines}Content-Type: application/json\r\n` +
      `Content-Length: ${1024 * 1024}\r\n\r\n{"a":"${'a'.repeat(1024)}`,
    trickle: 'a',
  },
  {
    name: 'a chunked body that never ends',
    perRoute: true,
    start: (method, target, headerLines) =>
      `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headerLines}Content-Type: application/json\r\n` +
      'Transfer-Encoding: chunked\r\n\r\n100000\r\n{"a":"',
    trickle: 'a',
  },
  {
    name: 'a multipart upload that stalls inside its file',
    perRoute: true,
    start: (method, target, headerLines) =>
      `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headerLines}` +
      `Content-Type: multipart/form-data; boundary=${UPLOAD_BOUNDARY}\r\nContent-Length: ${1024 * 1024}\r\n\r\n` +
      `--${UPLOAD_BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\n` +
      'Content-Type: text/plain\r\n\r\nslow',
    trickle: 'w',
  },
];
