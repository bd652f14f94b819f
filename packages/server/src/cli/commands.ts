import { type AuditCommandDeps, auditCommands } from '../audit/audit.cli.ts';
import type { Command } from '../cli-kit/command.ts';
import { type CompanyCommandDeps, companyCommands } from '../companies/companies.cli.ts';
import type { AppContext } from '../context.ts';
import {
  type DigitalEmployeeCommandDeps,
  digitalEmployeeCommands,
} from '../digital-employees/digital-employees.cli.ts';
import { type ConnectorCommandDeps, connectorCommands } from '../integrations/connectors.cli.ts';
import { type KnowledgeCommandDeps, knowledgeCommands } from '../knowledge/knowledge.cli.ts';
import { type ApiClientCommandDeps, apiClientCommands } from '../oauth/api-clients.cli.ts';
import { type KeyCommandDeps, keyCommands } from '../oauth/keys.cli.ts';
import { type PrivacyCommandDeps, privacyCommands } from '../privacy/privacy.cli.ts';
import { type UserCommandDeps, userCommands } from '../users/users.cli.ts';
import { type ChannelCommandDeps, channelCommands } from '../webchat/channels.cli.ts';
import {
  type ConversationCommandDeps,
  conversationCommands,
} from '../webchat/conversations/conversations.cli.ts';
import { type WebhookCommandDeps, webhookCommands } from '../webhooks/webhooks.cli.ts';
import { type MasterKeyCommandDeps, masterKeyCommands } from './master-key.cli.ts';
import { realtimeCommand } from './realtime.cli.ts';
import { serveCommand } from './serve.cli.ts';

/** A command that runs without the services (`serve`, `realtime`: they build their own). */
export type StandaloneCommand = Command<unknown, undefined> & { needsContext: false };
/** A command that runs on the services the CLI built (cli/main.ts), given the few it uses. */
export type ContextCommand = Command<unknown, AppContext> & { needsContext?: true };
export type AnyCommand = StandaloneCommand | ContextCommand;

/**
 * Hands each command of a capability exactly what it declares (its `…CommandDeps`), picked from the services by
 * name — as app.ts does for routes — so no command sees the whole context and this table shows what each uses.
 */
function given<D>(
  group: ReadonlyArray<Command<unknown, D>>,
  depsOf: (ctx: AppContext) => D,
): ContextCommand[] {
  return group.map((command) => ({
    ...command,
    needsContext: true,
    run: (options, ctx) => command.run(options, depsOf(ctx)),
  }));
}

/** Commands that change a conversation connect the broker first, so the change reaches the visitors. */
const connectBrokerOf = (ctx: AppContext) => () => ctx.webchat.start();

/** Every CLI command, listed explicitly (each capability exports its own from its folder) with what it uses. */
export const commands: AnyCommand[] = [
  serveCommand as StandaloneCommand,
  realtimeCommand as StandaloneCommand,
  ...given<CompanyCommandDeps>(companyCommands, (ctx) => ({ companies: ctx.companies, audit: ctx.audit })),
  ...given<ApiClientCommandDeps>(apiClientCommands, (ctx) => ({ oauth: ctx.oauth })),
  ...given<KeyCommandDeps>(keyCommands, (ctx) => ({ oauth: ctx.oauth })),
  ...given<AuditCommandDeps>(auditCommands, (ctx) => ({ audit: ctx.audit })),
  ...given<DigitalEmployeeCommandDeps>(digitalEmployeeCommands, (ctx) => ({
    digitalEmployees: ctx.digitalEmployees,
    actions: ctx.actions,
    companies: ctx.companies,
    audit: ctx.audit,
  })),
  ...given<ChannelCommandDeps>(channelCommands, (ctx) => ({
    channels: ctx.webchat.channels,
    identity: ctx.webchat.identity,
    audit: ctx.audit,
  })),
  ...given<ConversationCommandDeps>(conversationCommands, (ctx) => ({
    connectBroker: connectBrokerOf(ctx),
    conversations: ctx.webchat.conversations,
    commands: ctx.webchat.commands,
  })),
  ...given<UserCommandDeps>(userCommands, (ctx) => ({ users: ctx.users, audit: ctx.audit })),
  ...given<ConnectorCommandDeps>(connectorCommands, (ctx) => ({
    connectors: ctx.connectors,
    companies: ctx.companies,
  })),
  ...given<MasterKeyCommandDeps>(masterKeyCommands, (ctx) => ({
    config: ctx.config,
    store: ctx.store,
    sealer: ctx.sealer,
    sealedColumns: ctx.sealedColumns,
    audit: ctx.audit,
  })),
  ...given<WebhookCommandDeps>(webhookCommands, (ctx) => ({
    webhooks: ctx.webhooks,
    companies: ctx.companies,
  })),
  ...given<PrivacyCommandDeps>(privacyCommands, (ctx) => ({
    companies: ctx.companies,
    privacy: ctx.privacy.service,
    connectBroker: connectBrokerOf(ctx),
  })),
  ...given<KnowledgeCommandDeps>(knowledgeCommands, (ctx) => ({
    knowledge: ctx.knowledge,
    companies: ctx.companies,
  })),
];
