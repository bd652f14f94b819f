import { type Command, requireString } from '../cli-kit/command.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import { EVENT_TYPES } from '../events/domain-events.ts';
import type { Webhooks } from './webhooks.module.ts';
import type { createdWebhookView, Webhook } from './webhooks.service.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface WebhookCommandDeps {
  webhooks: Pick<Webhooks, 'service'>;
  companies: Pick<CompaniesService, 'get'>;
}

const CLI_ACTOR = { actor: 'cli' };

/** Event types as one space- (or comma-) separated argument: `--events "message.created conversation.closed"`. */
const eventsOf = (value: string): string[] => value.split(/[\s,]+/).filter(Boolean);

const create: Command<ReturnType<typeof createdWebhookView>, WebhookCommandDeps> = {
  name: 'webhooks create',
  summary: 'create an event webhook; prints its signing secret once (it cannot be shown again)',
  options: {
    company: { description: 'company id', required: true },
    url: { description: 'http(s) URL deliveries are POSTed to', required: true },
    events: { description: `space-separated event types: ${EVENT_TYPES.join(' ')}`, required: true },
    description: { description: 'what the webhook is for (at most 500 characters)' },
  },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    const created = await ctx.webhooks.service.create(
      companyId,
      {
        url: requireString(options, 'url'),
        events: eventsOf(requireString(options, 'events')),
        description: typeof options.description === 'string' ? options.description : null,
      },
      CLI_ACTOR,
    );
    // Loaded when the command runs, not when `parley` starts: `--help` and the other commands need none of it.
    const { createdWebhookView } = await import('./webhooks.service.ts');
    return createdWebhookView(created);
  },
  format: (r) =>
    [
      `created webhook ${r.id}`,
      `url:    ${r.url}`,
      `events: ${r.events.join(' ')}`,
      `secret: ${r.secret}`,
      '',
      'Store the secret now: it is shown only once (verify deliveries with it, see docs/webhooks.md).',
    ].join('\n'),
};

const list: Command<{ webhooks: Webhook[] }, WebhookCommandDeps> = {
  name: 'webhooks list',
  summary: "list a company's webhooks (secrets are never shown)",
  options: { company: { description: 'company id', required: true } },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    return { webhooks: await ctx.webhooks.service.list(companyId) };
  },
  format: (r) =>
    r.webhooks
      .map((w) => `${w.id}  ${w.enabled ? 'enabled ' : 'disabled'}  ${w.url}  ${w.events.join(' ')}`)
      .join('\n') || '(no webhooks)',
};

const remove: Command<{ id: string; deleted: true }, WebhookCommandDeps> = {
  name: 'webhooks delete',
  summary: 'delete a webhook and its pending deliveries',
  options: {
    company: { description: 'company id', required: true },
    'webhook-id': { description: 'webhook id', required: true },
  },
  async run(options, ctx) {
    const id = requireString(options, 'webhook-id');
    await ctx.webhooks.service.delete(requireString(options, 'company'), id, CLI_ACTOR);
    return { id, deleted: true };
  },
  format: (r) => `deleted webhook ${r.id}`,
};

export const webhookCommands = [create, list, remove];
