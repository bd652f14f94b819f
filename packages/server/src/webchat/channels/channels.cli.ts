import { type Command, requireString } from '../../cli/command.ts';
import { ChannelsService } from './channels.service.ts';

const create: Command<{ id: string; name: string; digital_employee_id: string; allowed_origins: string[] }> =
  {
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
      const channel = await new ChannelsService(ctx!.store.db).create({
        companyId: requireString(options, 'company'),
        name: requireString(options, 'name'),
        digitalEmployeeId: requireString(options, 'digital-employee'),
        allowedOrigins: origins,
      });
      await ctx!.audit.record({
        type: 'channel.created',
        companyId: channel.companyId,
        actor: 'cli',
        subject: channel.id,
      });
      return {
        id: channel.id,
        name: channel.name,
        digital_employee_id: channel.digitalEmployeeId,
        allowed_origins: channel.allowedOrigins,
      };
    },
    format: (r) => `created channel ${r.name}\nid: ${r.id}`,
  };

const list: Command<{
  channels: Array<{ id: string; name: string; digital_employee_id: string; allowed_origins: string[] }>;
}> = {
  name: 'channels list',
  summary: "list a company's webchat channels",
  options: { company: { description: 'company id', required: true } },
  async run(options, ctx) {
    const channels = await new ChannelsService(ctx!.store.db).list(requireString(options, 'company'));
    return {
      channels: channels.map((c) => ({
        id: c.id,
        name: c.name,
        digital_employee_id: c.digitalEmployeeId,
        allowed_origins: c.allowedOrigins,
      })),
    };
  },
  format: (r) =>
    r.channels.map((c) => `${c.id}  ${c.name}  ${c.allowed_origins.join(' ')}`).join('\n') || '(no channels)',
};

export const channelCommands = [create, list];
