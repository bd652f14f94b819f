import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { describe, test } from 'node:test';
import { signHmacJwt, TokenError } from './jwt.ts';
import { TokenVerifier } from './verifier.ts';

/** Connection and subscription JWT verification with Centrifugo's claim rules (docs/protocol.md "Tokens"). */

const now = () => Math.floor(Date.now() / 1000);

function signAsymmetric(claims: object, alg: 'RS256' | 'ES256', key: KeyObject): string {
  const header = Buffer.from(JSON.stringify({ alg, typ: 'JWT' })).toString('base64url');
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const input = Buffer.from(`${header}.${payload}`);
  const signature =
    alg === 'RS256' ? sign('sha256', input, key) : sign('sha256', input, { key, dsaEncoding: 'ieee-p1363' });
  return `${header}.${payload}.${signature.toString('base64url')}`;
}

function expectCode(fn: () => unknown, code: 'token_invalid' | 'token_expired'): void {
  assert.throws(fn, (error: unknown) => error instanceof TokenError && error.code === code);
}

describe('signatures', () => {
  test('HS256/384/512 verify with any configured secret and fail with others', () => {
    const verifier = new TokenVerifier({ hmacSecretKeys: ['current-secret', 'previous-secret'] });
    for (const alg of ['HS256', 'HS384', 'HS512'] as const) {
      assert.equal(verifier.verifyConnectToken(signHmacJwt({ sub: 'u' }, 'current-secret', alg)).user, 'u');
    }
    assert.equal(verifier.verifyConnectToken(signHmacJwt({ sub: 'old' }, 'previous-secret')).user, 'old');
    expectCode(() => verifier.verifyConnectToken(signHmacJwt({ sub: 'u' }, 'other')), 'token_invalid');
  });

  test('RS256 and ES256 verify with PEM public keys; alg none and tampered tokens are invalid', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const verifier = new TokenVerifier({
      rsaPublicKey: rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      ecdsaPublicKey: ec.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    });
    assert.equal(
      verifier.verifyConnectToken(signAsymmetric({ sub: 'r' }, 'RS256', rsa.privateKey)).user,
      'r',
    );
    assert.equal(verifier.verifyConnectToken(signAsymmetric({ sub: 'e' }, 'ES256', ec.privateKey)).user, 'e');
    const token = signAsymmetric({ sub: 'r' }, 'RS256', rsa.privateKey);
    const [header, , signature] = token.split('.');
    const forged = `${header}.${Buffer.from('{"sub":"admin"}').toString('base64url')}.${signature}`;
    expectCode(() => verifier.verifyConnectToken(forged), 'token_invalid');
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.`;
    expectCode(() => verifier.verifyConnectToken(none), 'token_invalid');
    // HS256 is not enabled without a secret, even if someone signs with the public key text.
    expectCode(() => verifier.verifyConnectToken(signHmacJwt({ sub: 'x' }, 'whatever')), 'token_invalid');
    expectCode(() => verifier.verifyConnectToken('not.a.jwt'), 'token_invalid');
  });
});

describe('connection token claims', () => {
  const verifier = new TokenVerifier({ hmacSecretKeys: ['s'], audience: 'parley', issuer: 'https://issuer' });
  const token = (claims: object) => signHmacJwt({ aud: 'parley', iss: 'https://issuer', ...claims }, 's');

  test('exp and nbf decide expiry; expire_at overrides exp and 0 disables it', () => {
    expectCode(() => verifier.verifyConnectToken(token({ sub: 'u', exp: now() - 1 })), 'token_expired');
    expectCode(() => verifier.verifyConnectToken(token({ sub: 'u', nbf: now() + 60 })), 'token_expired');
    assert.equal(verifier.verifyConnectToken(token({ sub: 'u', exp: now() + 60 })).expireAt, now() + 60);
    assert.equal(verifier.verifyConnectToken(token({ sub: 'u', exp: now() + 60, expire_at: 0 })).expireAt, 0);
    assert.equal(
      verifier.verifyConnectToken(token({ sub: 'u', exp: now() + 60, expire_at: now() + 5 })).expireAt,
      now() + 5,
    );
  });

  test('aud and iss are checked when configured; a channel claim makes a connection token invalid', () => {
    expectCode(
      () => verifier.verifyConnectToken(signHmacJwt({ sub: 'u', iss: 'https://issuer' }, 's')),
      'token_invalid',
    );
    expectCode(
      () => verifier.verifyConnectToken(signHmacJwt({ sub: 'u', aud: 'parley' }, 's')),
      'token_invalid',
    );
    assert.equal(verifier.verifyConnectToken(token({ sub: 'u', aud: ['x', 'parley'] })).user, 'u');
    expectCode(() => verifier.verifyConnectToken(token({ sub: 'u', channel: 'chat:1' })), 'token_invalid');
    expectCode(() => verifier.verifyConnectToken(token({ sub: 42 })), 'token_invalid');
  });

  test('info, b64info, meta, channels and subs with overrides', () => {
    const claims = verifier.verifyConnectToken(
      token({
        sub: '',
        info: { name: 'Ann' },
        meta: { tenant: 7 },
        subs: { 'news:1': { info: { role: 'reader' }, override: { presence: { value: false } } } },
      }),
    );
    assert.equal(claims.user, '');
    assert.equal(claims.info, '{"name":"Ann"}');
    assert.deepEqual(claims.meta, { tenant: 7 });
    assert.deepEqual(
      { ...claims.subs },
      { 'news:1': { info: '{"role":"reader"}', override: { presence: false } } },
    );
    const b64 = verifier.verifyConnectToken(
      token({ sub: 'u', b64info: Buffer.from('{"a":1}').toString('base64'), channels: ['x', 'y'] }),
    );
    assert.equal(b64.info, '{"a":1}');
    assert.deepEqual(Object.keys(b64.subs), ['x', 'y']);
  });
});

describe('subscription token claims', () => {
  const verifier = new TokenVerifier({ hmacSecretKeys: ['s'] });

  test('channel is required; client, info, data and override are read', () => {
    expectCode(() => verifier.verifySubscribeToken(signHmacJwt({ sub: 'u' }, 's')), 'token_invalid');
    const claims = verifier.verifySubscribeToken(
      signHmacJwt(
        {
          sub: 'u',
          channel: 'chat:1',
          client: 'c1',
          info: { r: 1 },
          b64data: Buffer.from('"hi"').toString('base64'),
          override: { join_leave: { value: true } },
          exp: now() + 30,
        },
        's',
      ),
    );
    assert.equal(claims.channel, 'chat:1');
    assert.equal(claims.client, 'c1');
    assert.equal(claims.info, '{"r":1}');
    assert.equal(claims.data, '"hi"');
    assert.deepEqual(claims.override, { joinLeave: true });
    assert.equal(claims.expireAt, now() + 30);
    expectCode(
      () => verifier.verifySubscribeToken(signHmacJwt({ sub: 'u', channel: 'c', exp: now() - 1 }, 's')),
      'token_expired',
    );
  });
});
