import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';

describe('OpenAPI document', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ database: 'sqlite' });
  });
  after(() => server.close());

  it('/docs/json is a valid OpenAPI 3.1 document', async () => {
    const result = await http(`${server.baseUrl}/docs/json`);
    assert.equal(result.status, 200);
    assert.equal(result.body.openapi, '3.1.0');
    // validate() dereferences in place: give it a copy.
    await SwaggerParser.validate(structuredClone(result.body));
  });

  it('lists the OAuth and platform routes with their schemas and security', async () => {
    const { paths } = (await http(`${server.baseUrl}/docs/json`)).body;
    const token = paths['/platform/v1/auth/token/client-credentials'];
    assert.ok(token?.post, 'token endpoint');
    assert.deepEqual(Object.keys(token), ['post'], 'the 405 routes stay hidden');
    assert.deepEqual(token.post.security, [{ clientBasic: [] }]);
    assert.ok(
      token.post.requestBody.content['application/x-www-form-urlencoded'].schema.properties.grant_type,
    );
    for (const status of ['200', '400', '401', '429'])
      assert.ok(token.post.responses[status], `token ${status}`);
    assert.deepEqual(
      Object.keys(token.post.responses['200'].content['application/json'].schema.properties).sort(),
      ['access_token', 'expires_in', 'scope', 'token_type'],
    );

    const whoami = paths['/platform/v1/auth/whoami']?.get;
    assert.ok(whoami, 'whoami');
    assert.deepEqual(whoami.security, [{ bearer: [] }]);
    for (const status of ['200', '401', '403']) assert.ok(whoami.responses[status], `whoami ${status}`);

    assert.ok(paths['/.well-known/jwks.json']?.get, 'jwks');
    assert.ok(paths['/.well-known/oauth-authorization-server']?.get, 'metadata');
  });

  it('gives every operation a tag and a summary, lists no OPTIONS plumbing, and marks bearer operations', async () => {
    const { paths, tags } = (await http(`${server.baseUrl}/docs/json`)).body;
    const declared = new Set((tags as Array<{ name: string }>).map((t) => t.name));
    for (const [path, item] of Object.entries<
      Record<string, { tags?: string[]; summary?: string; security?: unknown }>
    >(paths)) {
      assert.ok(!('options' in item), `no OPTIONS row for ${path}`);
      for (const [method, operation] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.ok(operation.summary, `${where} has a summary`);
        assert.ok(operation.tags?.length, `${where} has a tag`);
        for (const tag of operation.tags ?? [])
          assert.ok(declared.has(tag), `${where}: tag ${tag} is declared`);
        if (path.startsWith('/platform/v1/conversations'))
          assert.deepEqual(operation.security, [{ bearer: [] }], `${where} needs a bearer token`);
      }
    }
  });
});
