import { type Command, requireString } from '../cli-kit/command.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import { connectorTypeNames } from './connector-types.ts';
import type { connectorView } from './connectors.schemas.ts';
import type { ConnectorsService } from './connectors.service.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface ConnectorCommandDeps {
  connectors: ConnectorsService;
  companies: Pick<CompaniesService, 'get'>;
}

const CLI_ACTOR = { actor: 'cli' };

const create: Command<{ id: string; name: string; type: string }, ConnectorCommandDeps> = {
  name: 'connectors create',
  summary: 'create an integration connector (its API key is stored encrypted and never shown again)',
  options: {
    company: { description: 'company id', required: true },
    name: { description: 'display name', required: true },
    type: { description: connectorTypeNames().join('|'), required: true },
    url: { description: 'base URL (http/https); the openai type defaults to https://api.openai.com/v1' },
    'api-key': {
      description: 'the API key Parley sends as bearer (can also be set later over the API)',
      secret: true,
    },
  },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    const connector = await ctx.connectors.create(
      {
        companyId,
        name: requireString(options, 'name'),
        type: requireString(options, 'type'),
        url: typeof options.url === 'string' ? options.url : undefined,
        apiKey: typeof options['api-key'] === 'string' ? options['api-key'] : undefined,
      },
      CLI_ACTOR,
    );
    return { id: connector.id, name: connector.name, type: connector.type };
  },
  format: (r) => `created ${r.type} connector ${r.name}\nid: ${r.id}`,
};

const list: Command<{ connectors: ReturnType<typeof connectorView>[] }, ConnectorCommandDeps> = {
  name: 'connectors list',
  summary: "list a company's connectors (keys are never shown: api_key_set, key_version, rotated_at)",
  options: { company: { description: 'company id', required: true } },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    // Loaded when the command runs, not when `parley` starts: `--help` and the other commands need none of it.
    const { connectorView } = await import('./connectors.schemas.ts');
    return { connectors: (await ctx.connectors.list(companyId)).map(connectorView) };
  },
  format: (r) =>
    r.connectors
      .map(
        (c) =>
          `${c.id}  ${c.type.padEnd(8)} ${c.name}  ${c.url}  key: ${c.api_key_set ? `v${c.key_version} (${c.rotated_at})` : 'not set'}`,
      )
      .join('\n') || '(no connectors)',
};

const remove: Command<{ id: string; deleted: true }, ConnectorCommandDeps> = {
  name: 'connectors delete',
  summary: 'delete a connector and its stored key',
  options: {
    company: { description: 'company id', required: true },
    'connector-id': { description: 'connector id', required: true },
  },
  async run(options, ctx) {
    const id = requireString(options, 'connector-id');
    await ctx.connectors.delete(requireString(options, 'company'), id, CLI_ACTOR);
    return { id, deleted: true };
  },
  format: (r) => `deleted connector ${r.id}`,
};

export const connectorCommands = [create, list, remove];
