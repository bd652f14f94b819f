import { readFileSync } from 'node:fs';
import { type Command, requireString, UsageError } from '../cli-kit/command.ts';
import {
  apiClientView,
  type ClientQuotaSettings,
  type ClientSecretView,
  parseDuration,
  type RotatedSecret,
} from './api-clients.service.ts';
import type { OAuthServices } from './oauth.services.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface ApiClientCommandDeps {
  oauth: Pick<OAuthServices, 'clients' | 'quotas'>;
}

const optional = (
  options: Record<string, string | boolean | undefined>,
  name: string,
): string | undefined => {
  const value = options[name];
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
};

/** Scopes as one space- (or comma-) separated argument: `--scopes "connector:write connector:read"`. */
const scopesOf = (value: string): string[] => value.split(/[\s,]+/).filter(Boolean);

const create: Command<
  {
    client_id: string;
    client_secret?: string;
    name: string;
    scopes: string[];
    auth_method?: 'private_key_jwt';
  },
  ApiClientCommandDeps
> = {
  name: 'api-clients create',
  summary: 'create an API client; prints its secret once (it cannot be shown again)',
  options: {
    company: { description: 'company id', required: true },
    name: { description: 'display name (1-200 characters)', required: true },
    scopes: { description: 'space-separated scopes, e.g. "connector:write connector:read"', required: true },
    'auth-method': { description: 'client_secret (default) or private_key_jwt (RFC 7523; no secret)' },
    'jwks-file': { description: 'private_key_jwt: a file holding the client’s public JWK Set' },
    'jwks-uri': { description: 'private_key_jwt: https URL where the client publishes its JWK Set' },
    dpop: { description: 'optional (default) or required: DPoP-bound tokens (RFC 9449)' },
  },
  async run(options, ctx) {
    const method = optional(options, 'auth-method') ?? 'client_secret';
    if (!['client_secret', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'].includes(method)) {
      throw new UsageError('--auth-method is client_secret or private_key_jwt');
    }
    const jwksFile = optional(options, 'jwks-file');
    let jwks: unknown;
    if (jwksFile !== undefined) {
      try {
        jwks = JSON.parse(readFileSync(jwksFile, 'utf8'));
      } catch {
        throw new UsageError('--jwks-file is not a readable JSON file');
      }
    }
    const { client, secret } = await ctx.oauth.clients.createAny({
      companyId: requireString(options, 'company'),
      name: requireString(options, 'name'),
      scopes: scopesOf(requireString(options, 'scopes')),
      actor: 'cli',
      authMethod: method === 'private_key_jwt' ? 'private_key_jwt' : 'client_secret',
      jwks,
      jwksUri: optional(options, 'jwks-uri'),
      dpop: dpopOption(optional(options, 'dpop')),
    });
    // The contract's four keys for a secret client; a private_key_jwt client has no secret and says so.
    if (secret !== undefined)
      return { client_id: client.clientId, client_secret: secret, name: client.name, scopes: client.scopes };
    return {
      client_id: client.clientId,
      name: client.name,
      scopes: client.scopes,
      auth_method: 'private_key_jwt',
    };
  },
  format: (r) =>
    [
      `created API client ${r.name}`,
      `client_id:     ${r.client_id}`,
      ...(r.client_secret ? [`client_secret: ${r.client_secret}`] : [`auth method:   ${r.auth_method}`]),
      `scopes:        ${r.scopes.join(' ')}`,
      ...(r.client_secret
        ? [
            '',
            'Store the secret now: it is shown only this once. If it is lost, rotate it (api-clients rotate-secret).',
          ]
        : []),
    ].join('\n'),
};

const rotateSecret: Command<RotatedSecret, ApiClientCommandDeps> = {
  name: 'api-clients rotate-secret',
  summary: 'give a client a new secret (printed once); the old one keeps working until it expires',
  options: {
    company: { description: 'company id', required: true },
    'client-id': { description: 'client id (pcl_…)', required: true },
    'old-expires-in': { description: 'how long the old secret keeps working: 7d (default), 12h, 30m, 0' },
  },
  async run(options, ctx) {
    const expiresIn = optional(options, 'old-expires-in');
    return ctx.oauth.clients.rotateSecret({
      companyId: requireString(options, 'company'),
      clientId: requireString(options, 'client-id'),
      oldExpiresInSeconds: expiresIn === undefined ? undefined : parseDuration(expiresIn),
      actor: 'cli',
    });
  },
  format: (r) =>
    [
      `new secret ${r.secret_id} for ${r.client_id}`,
      `client_secret: ${r.client_secret}`,
      `the old secret works until ${r.old_secret_expires_at}`,
      '',
      'Store the secret now: it is shown only this once.',
    ].join('\n'),
};

const listSecrets: Command<{ secrets: ClientSecretView[] }, ApiClientCommandDeps> = {
  name: 'api-clients secrets',
  summary: "list a client's working secrets (ids, expiry, last use; never the secrets)",
  options: {
    company: { description: 'company id', required: true },
    'client-id': { description: 'client id (pcl_…)', required: true },
  },
  async run(options, ctx) {
    const secrets = await ctx.oauth.clients.listSecrets(
      requireString(options, 'company'),
      requireString(options, 'client-id'),
    );
    return { secrets };
  },
  format: (r) =>
    r.secrets
      .map(
        (s) =>
          `${s.id}  created ${s.created_at}  expires ${s.expires_at ?? 'never'}  last used ${s.last_used_at ?? 'never'}`,
      )
      .join('\n') || '(no working secrets)',
};

const revokeSecret: Command<
  { client_id: string; secret_id: string; revoked_at: string },
  ApiClientCommandDeps
> = {
  name: 'api-clients revoke-secret',
  summary: 'revoke one secret of a client at once (not its last working one)',
  options: {
    company: { description: 'company id', required: true },
    'client-id': { description: 'client id (pcl_…)', required: true },
    'secret-id': { description: 'secret id (psk_…, from api-clients secrets)', required: true },
  },
  async run(options, ctx) {
    return ctx.oauth.clients.revokeSecret({
      companyId: requireString(options, 'company'),
      clientId: requireString(options, 'client-id'),
      secretId: requireString(options, 'secret-id'),
      actor: 'cli',
    });
  },
  format: (r) => `revoked secret ${r.secret_id} of ${r.client_id}`,
};

const list: Command<{ api_clients: Array<ReturnType<typeof apiClientView>> }, ApiClientCommandDeps> = {
  name: 'api-clients list',
  summary: "list a company's API clients (never their secrets)",
  options: { company: { description: 'company id', required: true } },
  async run(options, ctx) {
    const clients = await ctx.oauth.clients.list(requireString(options, 'company'));
    return { api_clients: clients.map(apiClientView) };
  },
  format: (r) =>
    r.api_clients
      .map(
        (c) => `${c.client_id}  ${c.name}  [${c.scopes.join(' ')}]  last used: ${c.last_used_at ?? 'never'}`,
      )
      .join('\n') || '(no API clients)',
};

const remove: Command<{ client_id: string; deleted_at: string }, ApiClientCommandDeps> = {
  name: 'api-clients delete',
  summary: 'delete an API client: no new tokens; issued tokens work until they expire (at most 1 hour)',
  options: {
    company: { description: 'company id', required: true },
    'client-id': { description: 'client id (pcl_…)', required: true },
  },
  async run(options, ctx) {
    const client = await ctx.oauth.clients.delete(
      requireString(options, 'company'),
      requireString(options, 'client-id'),
      'cli',
    );
    return { client_id: client.clientId, deleted_at: client.deletedAt! };
  },
  format: (r) => `deleted API client ${r.client_id}; its tokens stop working within the hour`,
};

function dpopOption(value: string | undefined): 'optional' | 'required' | undefined {
  if (value === undefined || value === 'optional' || value === 'required') return value;
  throw new UsageError('--dpop is optional or required');
}

/** `--tokens-per-minute 120` → 120; `default` → null (the configured default); absent → unchanged. */
function quotaOption(
  options: Record<string, string | boolean | undefined>,
  name: string,
): number | null | undefined {
  const value = optional(options, name);
  if (value === undefined) return undefined;
  if (value === 'default') return null;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} is a whole number or "default"`);
  return Number(value);
}

const setQuotas: Command<
  { client_id: string; quotas: { tokens_per_minute: number | null; api_calls_per_minute: number | null } },
  ApiClientCommandDeps
> = {
  name: 'api-clients set-quota',
  summary: 'set a client\'s token and API-call quotas per minute ("default": the deployment\'s default)',
  options: {
    company: { description: 'company id', required: true },
    'client-id': { description: 'client id (pcl_…)', required: true },
    'tokens-per-minute': { description: 'token requests per minute, or "default"' },
    'api-calls-per-minute': { description: 'bearer API calls per minute, or "default"' },
  },
  async run(options, ctx) {
    const quotas: Partial<ClientQuotaSettings> = {
      tokensPerMinute: quotaOption(options, 'tokens-per-minute'),
      apiCallsPerMinute: quotaOption(options, 'api-calls-per-minute'),
    };
    const clientId = requireString(options, 'client-id');
    const set = await ctx.oauth.quotas.set({
      companyId: requireString(options, 'company'),
      clientId,
      quotas,
      actor: 'cli',
    });
    return {
      client_id: clientId,
      quotas: { tokens_per_minute: set.tokensPerMinute, api_calls_per_minute: set.apiCallsPerMinute },
    };
  },
  format: (r) =>
    `quotas of ${r.client_id}: tokens ${r.quotas.tokens_per_minute ?? 'default'}/min, API calls ${r.quotas.api_calls_per_minute ?? 'default'}/min`,
};

export const apiClientCommands = [create, list, remove, rotateSecret, listSecrets, revokeSecret, setQuotas];
