import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  BODY_ATTACKS,
  HEADER_ATTACKS,
  PATH_ATTACKS,
  QUERY_ATTACKS,
} from '@parley/server/internal/hostile-input/attacks';
import { type RawResponse, rawRequest } from '@parley/server/internal/hostile-input/raw-http';
import { SCOPES } from '@parley/server/internal/oauth/principal';
import type { TestDatabase } from '../databases.ts';
import { createTestClient } from '../oauth/oauth-fixtures.ts';
import { type PortalTestClient, startPortalWorld } from '../portal/portal-fixtures.ts';
import type { TestServer } from '../test-server.ts';
import {
  createChannelWithEmployee,
  createConversation,
  fetchPlatformToken,
  newVisitor,
} from '../webchat/webchat-fixtures.ts';

/**
 * The hostile-input suite over HTTP: every route the app registered (its route index, hidden ones included) meets
 * every attack of packages/server/src/hostile-input/attacks.ts — deep JSON, U+0000 and unpaired surrogates in
 * bodies, keys, headers, the query and the path, bytes that are not UTF-8, oversize bodies and fields — with the
 * credentials the route needs, so the input gets as far in as it can. The bar: no answer is a 5xx, every request is answered, and the server logs no
 * error meanwhile. Timed attacks (slow bodies and headers) are hostile-timed.suite.ts, with the edge's
 * time-outs (see packages/server/src/hostile-input/attacks.ts).
 */

/** Requests in flight at once (two cores are shared by every test file). */
const PARALLEL = 4;

interface Route {
  method: string;
  url: string;
}

/**
 * The suite on one database: packages/server/src/hostile-input/hostile-http.sqlite.test.ts and
 * packages/server/src/hostile-input/hostile-http.postgres.test.ts run it, one process each.
 */
export function hostileHttpSuite(database: TestDatabase): void {
  describe(`hostile input over HTTP, every route (${database})`, () => {
    let server: TestServer;
    let port: number;
    let acme: PortalTestClient;
    let routes: Route[];
    /** The valid credentials of every kind: bearer (all scopes), portal session with CSRF, SDK session. */
    let credentials: Array<[string, string]>;
    /** A real resource for each kind of path parameter, so handlers run, not only validation. */
    let ids: Record<string, string>;

    before(async () => {
      let acmeId: string;
      ({ server, acme, acmeId } = await startPortalWorld(database));
      port = Number(new URL(server.baseUrl).port);
      // HEAD answers like GET without a body: GET covers it.
      routes = server.routes().filter((r) => r.method !== 'HEAD');
      const token = await fetchPlatformToken(server, acmeId, [...SCOPES]);
      const visitor = newVisitor(acmeId);
      const conversation = await createConversation(server, visitor);
      const employee = await server.ctx.digitalEmployees.getDefault(acmeId);
      const posted = await fetch(`${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ blocks: [{ type: 'markdown', content: 'hello' }] }),
      });
      const connector = await acme.post('/connectors', {
        name: 'Hostile',
        type: 'webhook',
        url: 'http://127.0.0.1:9/x',
      });
      const canned = await acme.post('/canned-responses', { shortcut: 'hi', title: 'Hi', content: 'Hello' });
      const webhook = await server.ctx.webhooks.service.create(
        acmeId,
        { url: 'http://127.0.0.1:9/hook', events: ['conversation.created'] },
        { actor: 'user:test', ip: '127.0.0.1' },
      );
      ids = {
        conversations: conversation.id,
        messages: ((await posted.json()) as { id: string }).id,
        connectors: connector.body.id,
        'api-keys': connector.body.id,
        'canned-responses': canned.body.id,
        webhooks: webhook.webhook.id,
        'digital-employees': employee.id,
        channels: await createChannelWithEmployee(server, acmeId, employee.id),
        'api-clients': (await createTestClient(server.ctx, ['connector:read'], acmeId)).clientId,
      };
      const cookie = acme.cookie;
      credentials = [
        ['authorization', `Bearer ${token}`],
        ['cookie', cookie],
        ['x-csrf-token', acme.csrf],
        ...Object.entries(visitor.headers),
      ];
    });
    after(() => server.close());

    /** `url` with its parameters filled: a real id for the resource the segment before names, else `value`. */
    const fill = (url: string, value?: string) =>
      url
        .split('/')
        .map((segment, i, all) => {
          if (segment === '*') return value ?? 'x';
          if (!segment.startsWith(':')) return segment;
          if (value !== undefined) return value;
          const resource = segment === ':messageId' ? 'messages' : all[i - 1]!;
          return ids[resource] ?? randomUUID();
        })
        .join('/');

    /** Signing out would end the session the other requests use: that route meets the attacks without it. */
    const credentialsFor = (route: Route) =>
      route.method === 'DELETE' && route.url === '/portal/api/session' ? [] : credentials;

    /**
     * Sends every request of `cases` (PARALLEL at a time) and answers the refusals that break the bar: a 5xx, no
     * answer at all, or an error the server logged meanwhile.
     */
    async function attack(
      cases: Array<{ what: string; send: () => Promise<RawResponse> }>,
    ): Promise<string[]> {
      const logsFrom = server.logs.length;
      const broken: string[] = [];
      for (let i = 0; i < cases.length; i += PARALLEL) {
        await Promise.all(
          cases.slice(i, i + PARALLEL).map(async ({ what, send }) => {
            const res = await send();
            if (res.status === 0 || res.status >= 500)
              broken.push(`${what} → ${res.status || res.failure} ${res.body.slice(0, 160)}`);
          }),
        );
      }
      const errors = server.logs
        .slice(logsFrom)
        .filter((line) => (JSON.parse(line) as { level: number }).level >= 50)
        .map((line) => `logged: ${line.slice(0, 300)}`);
      return [...broken, ...errors];
    }

    const withHeaders = (route: Route, extra: Array<[string, string | Buffer]> = []) => {
      const replaced = new Set(extra.map(([name]) => name));
      return [...credentialsFor(route).filter(([name]) => !replaced.has(name)), ...extra];
    };

    it('bodies: deep JSON, unsafe text in values and keys, bytes that are not UTF-8, oversize, wrong types', async () => {
      const cases = routes.flatMap((route) =>
        BODY_ATTACKS.filter((a) => !a.heavy || route.method !== 'GET').map((a) => ({
          what: `${route.method} ${route.url} [${a.name}]`,
          send: () =>
            rawRequest(port, {
              method: route.method,
              target: fill(route.url),
              headers: withHeaders(route, [['content-type', a.contentType]]),
              body: a.body,
            }),
        })),
      );
      assert.deepEqual(await attack(cases), []);
    });

    it('headers: deep JSON, U+0000, bytes of a surrogate, deep tokens, oversize', async () => {
      const cases = routes.flatMap((route) =>
        HEADER_ATTACKS.map((a) => ({
          what: `${route.method} ${route.url} [${a.name}]`,
          send: () =>
            rawRequest(port, {
              method: route.method,
              target: fill(route.url),
              headers: withHeaders(route, [['content-type', 'application/json'], ...a.headers]),
              body: route.method === 'GET' ? undefined : '{}',
            }),
        })),
      );
      assert.deepEqual(await attack(cases), []);
    });

    it('the query: U+0000, encoded surrogates, malformed escapes, out-of-range numbers, deep cursors', async () => {
      const cases = routes.flatMap((route) =>
        QUERY_ATTACKS.map((a) => ({
          what: `${route.method} ${route.url} [${a.name}]`,
          send: () =>
            rawRequest(port, {
              method: route.method,
              target: `${fill(route.url)}?${a.query}`,
              headers: withHeaders(route, [['content-type', 'application/json']]),
              body: route.method === 'GET' ? undefined : '{}',
            }),
        })),
      );
      assert.deepEqual(await attack(cases), []);
    });

    it('path parameters: U+0000, encoded surrogates, overlong UTF-8, malformed escapes, too long, dot segments', async () => {
      const cases = routes
        .filter((route) => /[:*]/.test(route.url))
        .flatMap((route) =>
          PATH_ATTACKS.map((a) => ({
            what: `${route.method} ${route.url} [${a.name}]`,
            send: () =>
              rawRequest(port, {
                method: route.method,
                target: fill(route.url, a.value),
                headers: withHeaders(route, [['content-type', 'application/json']]),
                body: route.method === 'GET' ? undefined : '{}',
              }),
          })),
        );
      // And paths no route takes, with the same values.
      for (const a of PATH_ATTACKS)
        cases.push({
          what: `GET /${a.name} (no route)`,
          send: () =>
            rawRequest(port, { method: 'POST', target: `/no/route/${a.value}`, headers: credentials }),
        });
      assert.deepEqual(await attack(cases), []);
    });

    it('unauthenticated: the same bodies on every route without any credentials', async () => {
      const cases = routes.flatMap((route) =>
        BODY_ATTACKS.slice(0, 8).map((a) => ({
          what: `${route.method} ${route.url} [${a.name}, no credentials]`,
          send: () =>
            rawRequest(port, {
              method: route.method,
              target: fill(route.url),
              headers: [['content-type', a.contentType]],
              body: a.body,
            }),
        })),
      );
      assert.deepEqual(await attack(cases), []);
    });

    it('is still serving afterwards', async () => {
      assert.equal((await rawRequest(port, { method: 'GET', target: '/healthz' })).status, 200);
      assert.equal((await acme.get('/company')).status, 200);
    });
  });
}
