import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import {
  configureIdentity,
  createIdentityChannel,
  newIdentifiedVisitor,
  signVisitorToken,
} from '@parley/testing/webchat/identity-fixtures';
import { sdkGet } from '@parley/testing/webchat/webchat-fixtures';
import { SignJWT } from 'jose';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A compact JWS with any header, signed HS256-style over whatever the header claims (for forged tokens). */
function forge(header: Record<string, unknown>, claims: Record<string, unknown>, key: string | null): string {
  const input = `${b64(header)}.${b64(claims)}`;
  if (key === null) return `${input}.`;
  const hash = header.alg === 'HS512' ? 'sha512' : header.alg === 'HS384' ? 'sha384' : 'sha256';
  return `${input}.${createHmac(hash, key).update(input).digest('base64url')}`;
}

/**
 * Visitor tokens an attacker (or a careless integrator) might present. Each must be refused with the documented
 * code — 401 `visitor_token_invalid` — and no answer or log line may echo the token.
 */
for (const database of TEST_DATABASES) {
  describe(`visitor token security (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    let channelId: string;
    let secret: string;
    let otherSecret: string;
    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('Security Co')).id;
      ({ channelId, secret } = await createIdentityChannel(server, companyId, 'required'));
      otherSecret = (await createIdentityChannel(server, companyId, 'required')).secret;
    });
    after(() => server.close());

    const present = (token: string) =>
      sdkGet(server, newIdentifiedVisitor(companyId, channelId, token), '/conversations');

    async function assertRefused(token: string, what: string, detail?: RegExp) {
      const res = await present(token);
      assert.equal(res.status, 401, `${what}: ${res.text}`);
      assert.equal(res.body.code, 'visitor_token_invalid', what);
      assert.match(res.headers.get('content-type')!, /application\/problem\+json/);
      if (detail) assert.match(res.body.detail, detail, what);
      assert.ok(!res.text.includes(token), `${what}: the answer never echoes the token`);
      const signature = token.split('.')[2];
      if (signature) assert.ok(!res.text.includes(signature), `${what}: nor its signature`);
    }

    it('accepts a well-formed token signed with the channel’s secret (the baseline)', async () => {
      const res = await present(await signVisitorToken(secret, 'alice'));
      assert.equal(res.status, 200);
    });

    it('refuses expired tokens, tokens without exp and tokens that live longer than 24 h', async () => {
      await assertRefused(await signVisitorToken(secret, 'alice', { expiresIn: -120 }), 'expired', /expired/);
      await assertRefused(
        await signVisitorToken(secret, 'alice', { claims: { exp: undefined } }),
        'exp missing',
        /no exp/,
      );
      await assertRefused(
        await signVisitorToken(secret, 'alice', { expiresIn: 24 * 3600 + 600 }),
        'exp too far ahead',
        /24 hours/,
      );
      await assertRefused(
        await signVisitorToken(secret, 'alice', { claims: { exp: String(nowSeconds() + 60) } }),
        'exp not a number',
      );
      await assertRefused(
        await signVisitorToken(secret, 'alice', { claims: { nbf: nowSeconds() + 3600 } }),
        'nbf in the future',
        /nbf/,
      );
      await assertRefused(
        await signVisitorToken(secret, 'alice', { claims: { iat: nowSeconds() + 3600 } }),
        'iat in the future',
        /iat/,
      );
      // Exactly 24 h (within the clock tolerance) is fine, as is a clock a few seconds behind ours.
      assert.equal(
        (await present(await signVisitorToken(secret, 'alice', { expiresIn: 24 * 3600 }))).status,
        200,
      );
      assert.equal(
        (await present(await signVisitorToken(secret, 'alice', { claims: { iat: nowSeconds() + 10 } })))
          .status,
        200,
      );
    });

    it('refuses a bad signature and a token signed with another channel’s secret', async () => {
      const good = await signVisitorToken(secret, 'alice');
      const [h, p, s] = good.split('.') as [string, string, string];
      const flipped = `${h}.${p}.${s.startsWith('A') ? `B${s.slice(1)}` : `A${s.slice(1)}`}`;
      await assertRefused(flipped, 'bad signature', /signature/);
      await assertRefused(`${h}.${p}.`, 'no signature', /signature/);
      // A payload swapped under a valid signature.
      await assertRefused(`${h}.${b64({ sub: 'mallory', exp: nowSeconds() + 60 })}.${s}`, 'swapped payload');
      await assertRefused(
        await signVisitorToken(otherSecret, 'alice'),
        'another channel’s secret',
        /signature/,
      );
      // A secret that merely looks like ours (its base64 decoding as the key, a common integration slip).
      await assertRefused(
        await new SignJWT({ sub: 'alice', exp: nowSeconds() + 60 })
          .setProtectedHeader({ alg: 'HS256' })
          .sign(Buffer.from(secret.slice(4), 'base64')),
        'key from decoding the secret',
      );
    });

    it('pins HS256: alg none, HS512, HS384, RS256 and a missing alg are refused whatever they carry', async () => {
      const claims = { sub: 'alice', exp: nowSeconds() + 600 };
      await assertRefused(forge({ alg: 'none', typ: 'JWT' }, claims, null), 'alg none', /HS256/);
      await assertRefused(forge({ alg: 'none' }, claims, secret), 'alg none with a signature', /HS256/);
      await assertRefused(
        await signVisitorToken(secret, 'alice', { alg: 'HS512' }),
        'HS512 with the right secret',
        /HS256/,
      );
      await assertRefused(forge({ alg: 'HS384' }, claims, secret), 'HS384 with the right secret', /HS256/);
      await assertRefused(forge({ typ: 'JWT' }, claims, secret), 'no alg', /HS256/);
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      await assertRefused(
        await new SignJWT(claims).setProtectedHeader({ alg: 'RS256' }).sign(privateKey),
        'RS256',
        /HS256/,
      );
      // An HS256 header with a signature made by HS512 (a downgrade attempt) does not verify.
      const input = `${b64({ alg: 'HS256' })}.${b64(claims)}`;
      await assertRefused(
        `${input}.${createHmac('sha512', secret).update(input).digest('base64url')}`,
        'HS512 signature under an HS256 header',
        /signature/,
      );
    });

    it('checks typ, crit and the shape of the claims', async () => {
      const claims = { sub: 'alice', exp: nowSeconds() + 600 };
      assert.equal((await present(forge({ alg: 'HS256' }, claims, secret))).status, 200, 'typ is optional');
      await assertRefused(forge({ alg: 'HS256', typ: 'at+jwt' }, claims, secret), 'another typ', /typ/);
      await assertRefused(forge({ alg: 'HS256', crit: ['exp'] }, claims, secret), 'crit', /crit/);
      await assertRefused(forge({ alg: 'HS256' }, { exp: claims.exp }, secret), 'no sub', /sub/);
      await assertRefused(forge({ alg: 'HS256' }, { ...claims, sub: 42 }, secret), 'numeric sub', /sub/);
      await assertRefused(forge({ alg: 'HS256' }, { ...claims, sub: '' }, secret), 'empty sub', /sub/);
      await assertRefused(
        forge({ alg: 'HS256' }, { ...claims, sub: 'a\u0000b' }, secret),
        'U+0000 in sub',
        /sub/,
      );
      await assertRefused(forge({ alg: 'HS256' }, { ...claims, name: 7 }, secret), 'numeric name', /name/);
      await assertRefused('not.a.jwt', 'garbage', /well-formed/);
      await assertRefused('a.b', 'two segments', /well-formed/);
      await assertRefused(`${'x'.repeat(9000)}`, 'absurdly long', /too long/);
    });

    it('accepts a sub of 255 characters and refuses one of 256', async () => {
      assert.equal(
        (await present(await signVisitorToken(secret, '😀'.repeat(255)))).status,
        200,
        'counted in characters',
      );
      await assertRefused(await signVisitorToken(secret, 'x'.repeat(256)), 'sub too long', /255/);
    });

    it('after a rotation the previous secret verifies for 24 h, and not after', async () => {
      const rotating = await createIdentityChannel(server, companyId, 'required');
      const old = await signVisitorToken(rotating.secret, 'alice');
      const rotated = await configureIdentity(server, companyId, rotating.channelId, 'required', true);
      const presentTo = (token: string) =>
        sdkGet(server, newIdentifiedVisitor(companyId, rotating.channelId, token), '/conversations');
      assert.equal((await presentTo(old)).status, 200, 'the previous secret still verifies');
      assert.equal((await presentTo(await signVisitorToken(rotated.identity_secret!, 'alice'))).status, 200);

      // 24 h later (the grace period is stored as a time, so moving it is moving the clock).
      await server.ctx.store.db
        .updateTable('channels')
        .set({ identity_previous_until: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', rotating.channelId)
        .execute();
      const res = await presentTo(old);
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 'visitor_token_invalid');
      assert.equal((await presentTo(await signVisitorToken(rotated.identity_secret!, 'alice'))).status, 200);

      // A second rotation retires the first secret at once: only the one before the latest rotation survives.
      const third = await configureIdentity(server, companyId, rotating.channelId, 'required', true);
      assert.equal((await presentTo(old)).status, 401);
      assert.equal((await presentTo(await signVisitorToken(rotated.identity_secret!, 'alice'))).status, 200);
      assert.equal((await presentTo(await signVisitorToken(third.identity_secret!, 'alice'))).status, 200);
    });

    it('a secret copied to another channel’s row does not open (sealed with company, channel and slot)', async () => {
      const victim = await createIdentityChannel(server, companyId, 'required');
      const copy = await server.ctx.store.db
        .selectFrom('channels')
        .select('identity_secret')
        .where('id', '=', channelId)
        .executeTakeFirstOrThrow();
      await server.ctx.store.db
        .updateTable('channels')
        .set({ identity_secret: copy.identity_secret })
        .where('id', '=', victim.channelId)
        .execute();
      const res = await sdkGet(
        server,
        newIdentifiedVisitor(companyId, victim.channelId, await signVisitorToken(secret, 'alice')),
        '/conversations',
      );
      assert.equal(res.status, 500, 'an integrity failure, never a token accepted with the wrong secret');
      assert.equal(res.body.code, 'internal_error');
    });

    it('never writes a visitor token or an identity secret to the log', async () => {
      const token = await signVisitorToken(secret, 'alice');
      await present(token);
      await present(`${token}tampered`);
      const log = server.logs.join('\n');
      assert.ok(!log.includes(token.split('.')[2]!), 'no token signature in the log');
      assert.ok(!log.includes(secret) && !log.includes(otherSecret), 'no secret in the log');
    });
  });
}
