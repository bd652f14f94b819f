import type { AuditLog } from '../audit/audit.service.ts';
import { type Command, requireString, UsageError } from '../cli-kit/command.ts';
import {
  type Channel,
  type ChannelsService,
  IDENTITY_MODES,
  type IdentityMode,
} from './channels/channels.service.ts';
import type { ChannelIdentity, IdentitySettings } from './identity/channel-identity.ts';

// Beside channels/ and identity/ rather than in either: a channel's commands also configure its visitor identity.
/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface ChannelCommandDeps {
  channels: Pick<ChannelsService, 'create' | 'list'>;
  identity: Pick<ChannelIdentity, 'configure'>;
  audit: Pick<AuditLog, 'record'>;
}

/** A channel as the CLI prints it (snake_case, like the API). */
const channelView = (c: Channel) => ({
  id: c.id,
  name: c.name,
  digital_employee_id: c.digitalEmployeeId,
  allowed_origins: c.allowedOrigins,
  identity: c.identity.mode,
});
type ChannelView = ReturnType<typeof channelView>;

const create: Command<ChannelView, ChannelCommandDeps> = {
  name: 'channels create',
  summary: 'create a webchat channel (a widget or app) routed to a digital employee',
  options: {
    company: { description: 'company id', required: true },
    name: { description: 'display name', required: true },
    'digital-employee': { description: 'id of the digital employee that answers', required: true },
    'allowed-origins': {
      description: 'space-separated browser origins, e.g. "https://a.example https://b.example"',
    },
  },
  async run(options, ctx) {
    const origins =
      typeof options['allowed-origins'] === 'string'
        ? options['allowed-origins'].split(/\s+/).filter(Boolean)
        : [];
    const channel = await ctx.channels.create({
      companyId: requireString(options, 'company'),
      name: requireString(options, 'name'),
      digitalEmployeeId: requireString(options, 'digital-employee'),
      allowedOrigins: origins,
    });
    await ctx.audit.record({
      type: 'channel.created',
      companyId: channel.companyId,
      actor: 'cli',
      subject: channel.id,
    });
    return channelView(channel);
  },
  format: (r) => `created channel ${r.name}\nid: ${r.id}`,
};

const list: Command<{ channels: ChannelView[] }, ChannelCommandDeps> = {
  name: 'channels list',
  summary: "list a company's webchat channels",
  options: { company: { description: 'company id', required: true } },
  async run(options, ctx) {
    const channels = await ctx.channels.list(requireString(options, 'company'));
    return { channels: channels.map(channelView) };
  },
  format: (r) =>
    r.channels
      .map((c) => `${c.id}  ${c.name}  identity ${c.identity}  ${c.allowed_origins.join(' ')}`)
      .join('\n') || '(no channels)',
};

const identity: Command<IdentitySettings, ChannelCommandDeps> = {
  name: 'channels identity',
  summary: 'set how a channel treats visitor tokens (off, optional, required) and rotate its identity secret',
  options: {
    company: { description: 'company id', required: true },
    channel: { description: 'channel id', required: true },
    mode: { description: 'off | optional | required', required: true },
    'rotate-secret': {
      description: 'give the channel a new identity secret (the previous one verifies tokens for 24 h more)',
      flag: true,
    },
  },
  async run(options, ctx) {
    const mode = requireString(options, 'mode');
    if (!(IDENTITY_MODES as readonly string[]).includes(mode))
      throw new UsageError('--mode must be off, optional or required');
    return ctx.identity.configure(
      requireString(options, 'company'),
      requireString(options, 'channel'),
      { mode: mode as IdentityMode, rotateSecret: options['rotate-secret'] === true },
      { id: 'cli' },
    );
  },
  // The secret is printed only here, once: when the channel first gets one and on --rotate-secret.
  format: (r) =>
    [
      `channel ${r.channel_id}: identity ${r.identity}`,
      ...(r.identity_secret
        ? [
            `identity secret: ${r.identity_secret}`,
            'Store it now in your backend: it signs visitor tokens (HS256) and is not shown again.',
          ]
        : []),
    ].join('\n'),
};

export const channelCommands = [create, list, identity];
