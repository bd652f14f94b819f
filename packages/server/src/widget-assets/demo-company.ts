import type { CompaniesService } from '../companies/companies.service.ts';
import type { Config } from '../config/schema.ts';
import type { DigitalEmployeesService } from '../digital-employees/digital-employees.service.ts';
import type { ChannelsService } from '../webchat/channels/channels.service.ts';

/** What the demo page uses, handed over by the composition root (app.ts). */
export interface DemoDeps {
  config: Pick<Config, 'publicUrl' | 'port'>;
  companies: Pick<CompaniesService, 'list' | 'create' | 'find'>;
  digitalEmployees: Pick<DigitalEmployeesService, 'getDefault'>;
  channels: Pick<ChannelsService, 'list' | 'create'>;
}

export const DEMO_COMPANY_NAME = 'Demo';
export const DEMO_CHANNEL_NAME = 'Demo widget';

export interface DemoSetup {
  companyId: string;
  channelId: string;
}

/**
 * The company and channel `/demo` shows, created on first use so a new install chats right after `npm start`.
 * Idempotent: an existing company named "Demo" and its "Demo widget" channel are reused. The channel admits the
 * server's own origin (publicUrl) and the two loopback spellings of its port, so opening either
 * http://localhost:PORT/demo or http://127.0.0.1:PORT/demo works.
 */
export async function ensureDemo(ctx: DemoDeps): Promise<DemoSetup> {
  const company =
    (await ctx.companies.list()).find((c) => c.name === DEMO_COMPANY_NAME) ??
    (await ctx.companies.create(DEMO_COMPANY_NAME));
  const channels = ctx.channels;
  const existing = (await channels.list(company.id)).find((c) => c.name === DEMO_CHANNEL_NAME);
  if (existing) return { companyId: company.id, channelId: existing.id };
  const employee = await ctx.digitalEmployees.getDefault(company.id);
  const channel = await channels.create({
    companyId: company.id,
    name: DEMO_CHANNEL_NAME,
    digitalEmployeeId: employee.id,
    allowedOrigins: demoOrigins(ctx),
  });
  return { companyId: company.id, channelId: channel.id };
}

function demoOrigins(ctx: DemoDeps): string[] {
  const own = new URL(ctx.config.publicUrl).origin;
  const port = new URL(ctx.config.publicUrl).port || String(ctx.config.port);
  return [...new Set([own, `http://localhost:${port}`, `http://127.0.0.1:${port}`])];
}
