import { type Command, requireString } from '../cli-kit/command.ts';
import { apiClientView } from './api-clients.service.ts';
import type { OAuthServices } from './oauth.services.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
interface ApiClientCommandDeps {
  oauth: Pick<OAuthServices, 'clients'>;
}

/** Scopes as one space- (or comma-) separated argument: `--scopes "connector:write connector:read"`. */
const scopesOf = (value: string): string[] => value.split(/[\s,]+/).filter(Boolean);

const create: Command<
  { client_id: string; client_secret: string; name: string; scopes: string[] },
  ApiClientCommandDeps
> = {
  name: 'api-clients create',
  summary: 'create an API client; prints its secret once (it cannot be shown again)',
  options: {
    company: { description: 'company id', required: true },
    name: { description: 'display name (1-200 characters)', required: true },
    scopes: { description: 'space-separated scopes, e.g. "connector:write connector:read"', required: true },
  },
  async run(options, ctx) {
    const { client, secret } = await ctx.oauth.clients.create({
      companyId: requireString(options, 'company'),
      name: requireString(options, 'name'),
      scopes: scopesOf(requireString(options, 'scopes')),
      actor: 'cli',
    });
    return { client_id: client.clientId, client_secret: secret, name: client.name, scopes: client.scopes };
  },
  format: (r) =>
    [
      `created API client ${r.name}`,
      `client_id:     ${r.client_id}`,
      `client_secret: ${r.client_secret}`,
      `scopes:        ${r.scopes.join(' ')}`,
      '',
      'Store the secret now: it is shown only this once. If it is lost, delete the client and create a new one.',
    ].join('\n'),
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

export const apiClientCommands = [create, list, remove];
