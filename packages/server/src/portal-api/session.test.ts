import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestClock } from '@parley/testing/clock';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { createUsers, PASSWORD, PortalTestClient, startAcme } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';

for (const database of TEST_DATABASES) {
  describe(`portal sign-in, roles and CSRF (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    before(async () => {
      ({ server, acmeId: companyId } = await startAcme(
        database,
        { 'Admin@Acme.test': 'admin', 'agent@acme.test': 'agent' },
        {
          config: {
            portal: { loginFailuresPerEmail: 3, loginFailuresPerIp: 50, loginThrottleWindowSeconds: 60 },
          },
        },
      ));
    });
    after(() => server.close());

    it('signs in with a hardened session cookie and reports the user, company and CSRF token', async () => {
      const portal = new PortalTestClient(server.baseUrl);
      const res = await portal.signIn('admin@acme.test', PASSWORD);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.user.email, 'admin@acme.test');
      assert.equal(res.body.user.role, 'admin');
      assert.equal(res.body.company.id, companyId);
      assert.match(res.body.csrf_token, /^[A-Za-z0-9_-]{43}$/);
      const cookie = res.headers.get('set-cookie')!;
      assert.match(cookie, /^parley_portal_session=[A-Za-z0-9_-]{43};/);
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Strict/);
      assert.match(cookie, /Path=\/portal/);
      assert.doesNotMatch(
        cookie,
        /Secure/,
        'http public URL: no Secure flag, or the browser would drop the cookie',
      );
      const session = await portal.get('/session');
      assert.equal(session.status, 200);
      assert.equal(session.body.csrf_token, res.body.csrf_token);
      assert.equal(session.headers.get('cache-control'), 'no-store');
      // Only the hash of the session id is stored.
      const rows = await server.ctx.store.db.selectFrom('portal_sessions').select('id_hash').execute();
      const raw = portal.cookie.split('=')[1]!;
      assert.ok(rows.length > 0 && rows.every((r) => r.id_hash !== raw && /^[0-9a-f]{64}$/.test(r.id_hash)));
      // The password is stored as argon2id.
      const stored = await server.ctx.store.db
        .selectFrom('portal_users')
        .select('password_hash')
        .where('email', '=', 'admin@acme.test')
        .executeTakeFirstOrThrow();
      assert.match(stored.password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    });

    it('refuses a wrong password and an unknown email with the same answer', async () => {
      const wrong = await new PortalTestClient(server.baseUrl).signIn('agent@acme.test', 'not the password!');
      const unknown = await new PortalTestClient(server.baseUrl).signIn('nobody@acme.test', PASSWORD);
      for (const res of [wrong, unknown]) {
        assert.equal(res.status, 401);
        assert.equal(res.body.code, 'invalid_credentials');
        assert.equal(res.headers.get('set-cookie'), null);
      }
      assert.equal((await new PortalTestClient(server.baseUrl).get('/session')).body.code, 'not_signed_in');
    });

    it('throttles repeated failures per email with 429 and Retry-After, even for the right password', async () => {
      await createUsers(server, companyId, { 'throttled@acme.test': 'agent' });
      const portal = new PortalTestClient(server.baseUrl);
      for (let i = 0; i < 3; i++)
        assert.equal((await portal.signIn('throttled@acme.test', `wrong password ${i}!`)).status, 401);
      const blocked = await portal.signIn('throttled@acme.test', PASSWORD);
      assert.equal(blocked.status, 429);
      assert.equal(blocked.body.code, 'rate_limited');
      const retryAfter = Number(blocked.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    });

    it('refuses state-changing calls without or with a wrong CSRF token, accepts the right one', async () => {
      const portal = new PortalTestClient(server.baseUrl);
      assert.equal((await portal.signIn('agent@acme.test', PASSWORD)).status, 200);
      const missing = await portal.del('/session', { csrf: null });
      assert.equal(missing.status, 403);
      assert.equal(missing.body.code, 'csrf_failed');
      const wrong = await portal.del('/session', {
        csrf: portal.csrf.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
      });
      assert.equal(wrong.status, 403);
      assert.equal(wrong.body.code, 'csrf_failed');
      assert.equal((await portal.get('/session')).status, 200, 'the refused sign-out left the session alive');
      // A token of another session is no good either.
      const other = new PortalTestClient(server.baseUrl);
      await other.signIn('admin@acme.test', PASSWORD);
      assert.equal((await portal.del('/session', { csrf: other.csrf })).status, 403);
      assert.equal((await portal.del('/session')).status, 204);
      assert.equal((await portal.get('/session')).status, 401);
    });

    it('signs out: the old cookie no longer works anywhere', async () => {
      const portal = new PortalTestClient(server.baseUrl);
      await portal.signIn('admin@acme.test', PASSWORD);
      assert.equal((await portal.get('/company')).status, 200);
      const out = await portal.del('/session');
      assert.equal(out.status, 204);
      assert.match(out.headers.get('set-cookie') ?? '', /parley_portal_session=;/);
      const after = await portal.get('/company');
      assert.equal(after.status, 401);
      assert.equal(after.body.code, 'not_signed_in');
    });

    it('lets agents sign in but keeps them out of admin settings', async () => {
      const agent = new PortalTestClient(server.baseUrl);
      await agent.signIn('agent@acme.test', PASSWORD);
      assert.equal((await agent.get('/session')).body.user.role, 'agent');
      const res = await agent.get('/company');
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'forbidden_role');
      const write = await agent.put('/company/allowed-origins', {
        allowed_origins: ['https://evil.example'],
      });
      assert.equal(write.status, 403);
      assert.deepEqual((await server.ctx.companies.get(companyId)).allowedOrigins, []);
    });

    it('requires a session for every settings route', async () => {
      const anonymous = new PortalTestClient(server.baseUrl);
      for (const [method, path] of [
        ['GET', '/company'],
        ['PUT', '/company/allowed-origins'],
        ['DELETE', '/session'],
      ] as const) {
        const res = await anonymous.request(
          method,
          path,
          method === 'PUT' ? { allowed_origins: [] } : undefined,
        );
        assert.equal(res.status, 401, `${method} ${path}`);
      }
    });

    it('rejects a sign-in form posted cross-site (not JSON)', async () => {
      const res = await fetch(`${server.baseUrl}/portal/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=admin%40acme.test&password=correct+horse+battery',
      });
      assert.equal(res.status, 415);
      assert.equal(res.headers.get('set-cookie'), null);
    });

    it('serves the SPA with a strict CSP, bundles its assets on first request, and keeps its API out of /docs', async () => {
      const html = await fetch(`${server.baseUrl}/portal`);
      assert.equal(html.status, 200);
      assert.match(html.headers.get('content-type') ?? '', /text\/html/);
      const csp = html.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(await html.text(), /<script src="\/portal\/assets\/app.js" defer><\/script>/);
      assert.equal(
        (await fetch(`${server.baseUrl}/portal/channels`)).status,
        200,
        'client-side routes load the SPA',
      );
      const js = await fetch(`${server.baseUrl}/portal/assets/app.js`);
      assert.equal(js.status, 200);
      assert.match(js.headers.get('content-type') ?? '', /javascript/);
      assert.ok((await js.text()).length > 1000);
      const css = await fetch(`${server.baseUrl}/portal/assets/app.css`);
      assert.match(await css.text(), /\.sign-in/);
      const docs = await (await fetch(`${server.baseUrl}/docs/json`)).json();
      assert.ok(!Object.keys(docs.paths).some((p) => p.startsWith('/portal')));
      const unknown = await fetch(`${server.baseUrl}/portal/api/nope`);
      assert.equal(unknown.status, 404);
    });

    it('never writes the password or the session id to the log', async () => {
      const portal = new PortalTestClient(server.baseUrl);
      await portal.signIn('admin@acme.test', PASSWORD);
      const raw = portal.cookie.split('=')[1]!;
      const logs = server.logs.join('\n');
      assert.ok(!logs.includes(PASSWORD));
      assert.ok(!logs.includes(raw));
    });
  });

  describe(`portal sign-in throttling per IP (${database})`, () => {
    let server: TestServer;
    before(async () => {
      ({ server } = await startAcme(
        database,
        { 'a@acme.test': 'admin' },
        { config: { portal: { loginFailuresPerIp: 4, loginThrottleWindowSeconds: 60 } } },
      ));
    });
    after(() => server.close());

    it('throttles one IP trying many emails, also for a correct password', async () => {
      const portal = new PortalTestClient(server.baseUrl);
      for (let i = 0; i < 4; i++)
        assert.equal((await portal.signIn(`spray${i}@acme.test`, 'whatever password')).status, 401);
      const blocked = await portal.signIn('a@acme.test', PASSWORD);
      assert.equal(blocked.status, 429);
      assert.ok(Number(blocked.headers.get('retry-after')) >= 1);
    });
  });

  describe(`portal sign-in throttling per address and email (${database})`, () => {
    let server: TestServer;
    before(async () => {
      ({ server } = await startAcme(
        database,
        { 'owner@acme.test': 'admin' },
        {
          config: {
            trustProxy: true,
            portal: {
              loginFailuresPerEmail: 2,
              loginFailuresPerEmailAllIps: 5,
              loginFailuresPerIp: 50,
              loginThrottleWindowSeconds: 60,
            },
          },
        },
      ));
    });
    after(() => server.close());

    const signInFrom = (ip: string, password: string) =>
      http(`${server.baseUrl}/portal/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
        body: JSON.stringify({ email: 'owner@acme.test', password }),
      });

    it("locks an address out of one account without locking the account's owner out elsewhere; many addresses together still hit the account's budget", async () => {
      for (let i = 0; i < 2; i++)
        assert.equal((await signInFrom('192.0.2.1', `wrong password ${i}!`)).status, 401);
      assert.equal((await signInFrom('192.0.2.1', PASSWORD)).status, 429, 'that address waits');
      assert.equal((await signInFrom('192.0.2.2', PASSWORD)).status, 200, 'the owner, elsewhere, signs in');
      // Two more addresses spend the account's budget over every address (5): 2 + 2 + 1 failures.
      for (let i = 0; i < 2; i++)
        assert.equal((await signInFrom('192.0.2.3', `wrong password ${i}!`)).status, 401);
      assert.equal((await signInFrom('192.0.2.4', 'wrong password!')).status, 401);
      const blocked = await signInFrom('192.0.2.5', PASSWORD);
      assert.equal(blocked.status, 429);
      assert.equal(blocked.body.code, 'rate_limited');
    });
  });

  describe(`portal cookie behind https (${database})`, () => {
    let server: TestServer;
    before(async () => {
      ({ server } = await startAcme(
        database,
        { 'a@acme.test': 'admin' },
        { config: { publicUrl: 'https://portal.example', oauth: { audience: 'https://portal.example' } } },
      ));
    });
    after(() => server.close());

    it('marks the session cookie Secure when the public URL is https', async () => {
      const res = await new PortalTestClient(server.baseUrl).signIn('a@acme.test', PASSWORD);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('set-cookie') ?? '', /; Secure/);
    });
  });

  describe(`portal session expiry (${database})`, () => {
    let server: TestServer;
    // Session expiry reads this clock: the tests move it instead of waiting.
    const clock = new TestClock();
    before(async () => {
      ({ server } = await startAcme(
        database,
        { 'a@acme.test': 'admin' },
        { config: { portal: { sessionIdleSeconds: 60, sessionTtlSeconds: 300 } }, clock: clock.now },
      ));
    });
    after(() => server.close());

    it('ends an idle session', async () => {
      const portal = new PortalTestClient(server.baseUrl);
      await portal.signIn('a@acme.test', PASSWORD);
      assert.equal((await portal.get('/company')).status, 200);
      clock.advance(59_000);
      assert.equal((await portal.get('/company')).status, 200, 'idle for less than the idle limit');
      clock.advance(60_000);
      const res = await portal.get('/company');
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 'not_signed_in');
      clock.advance(-60_000);
      assert.equal((await portal.get('/company')).status, 401, 'ended for good, not only while idle');
    });

    it('ends an active session at its absolute lifetime', async () => {
      const portal = new PortalTestClient(server.baseUrl);
      await portal.signIn('a@acme.test', PASSWORD);
      // A request every 50 s keeps the idle limit (60 s) from ever being reached; the lifetime (300 s) still ends it.
      const statuses: number[] = [];
      for (let elapsed = 50; elapsed <= 350; elapsed += 50) {
        clock.advance(50_000);
        statuses.push((await portal.get('/company')).status);
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 401, 401]);
    });
  });
}
