import assert from 'node:assert/strict';
import { oauthServices } from '../../oauth/oauth.services.ts';
import type { TestServer } from '../../testing/test-server.ts';
import type { DigitalEmployee } from '../digital-employees.service.ts';
import type { DigitalEmployeeSettings } from '../digital-employees.settings.ts';

/** A company with a real connector (key sealed in the store) and a digital employee that uses it. */
export async function companyWithConnector(
  server: TestServer,
  type: 'webhook' | 'openai',
  url: string,
  apiKey: string | undefined,
  employee: { model?: string; systemPrompt?: string | null; settings?: DigitalEmployeeSettings } = {},
): Promise<{ companyId: string; connectorId: string; employee: DigitalEmployee }> {
  const company = await server.ctx.companies.create(
    `${type} company ${Math.random().toString(36).slice(2, 8)}`,
  );
  const connector = await server.ctx.connectors.create(
    { companyId: company.id, name: `${type} bot`, type, url, ...(apiKey ? { apiKey } : {}) },
    { actor: 'test' },
  );
  const created = await server.ctx.digitalEmployees.create({
    companyId: company.id,
    name: type === 'openai' ? 'Model' : 'Hooky',
    responder: type,
    connectorId: connector.id,
    model: employee.model ?? null,
    systemPrompt: employee.systemPrompt ?? null,
    settings: employee.settings ?? {},
  });
  return { companyId: company.id, connectorId: connector.id, employee: created };
}

/**
 * Rotates a connector key the way an integrator does (DESIGN.md): an API client with `connector:write` gets a token
 * from the token endpoint and PUTs the new key.
 */
export async function rotateThroughApi(
  server: TestServer,
  companyId: string,
  connectorId: string,
  apiKey: string,
): Promise<void> {
  const { client, secret } = await oauthServices(server.ctx).clients.create({
    companyId,
    name: 'key rotator',
    scopes: ['connector:write'],
  });
  const tokenResponse = await fetch(`${server.baseUrl}/platform/v1/auth/token/client-credentials`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client.clientId}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials&scope=connector%3Awrite',
  });
  assert.equal(tokenResponse.status, 200);
  const { access_token } = (await tokenResponse.json()) as { access_token: string };
  const put = await fetch(`${server.baseUrl}/integrations/v1/connectors/api-keys/${connectorId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: apiKey }),
  });
  assert.ok(put.status >= 200 && put.status < 300, `rotation answered ${put.status}`);
  assert.ok(!(await put.text()).includes(apiKey), 'the rotation response must not echo the key');
}

/** Asserts that nothing a failed call left behind (error message, serialised error) holds the key. */
export function assertNoKey(err: unknown, apiKey: string): void {
  const e = err as Error;
  assert.ok(!String(e?.message).includes(apiKey));
  assert.ok(!JSON.stringify(e).includes(apiKey));
  assert.ok(!String(e?.stack).includes(apiKey));
}
