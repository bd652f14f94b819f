import { auditCommands } from '../audit/audit.cli.ts';
import type { Command } from '../cli-kit/command.ts';
import { companyCommands } from '../companies/companies.cli.ts';
import type { AppContext } from '../context.ts';
import { digitalEmployeeCommands } from '../digital-employees/digital-employees.cli.ts';
import { connectorCommands } from '../integrations/connectors.cli.ts';
import { knowledgeCommands } from '../knowledge/knowledge.cli.ts';
import { apiClientCommands } from '../oauth/api-clients.cli.ts';
import { keyCommands } from '../oauth/keys.cli.ts';
import { privacyCommands } from '../privacy/privacy.cli.ts';
import { userCommands } from '../users/users.cli.ts';
import { channelCommands } from '../webchat/channels.cli.ts';
import { conversationCommands } from '../webchat/conversations/conversations.cli.ts';
import { webhookCommands } from '../webhooks/webhooks.cli.ts';
import { masterKeyCommands } from './master-key.cli.ts';
import { realtimeCommand } from './realtime.cli.ts';
import { serveCommand } from './serve.cli.ts';

/**
 * Every CLI command, listed explicitly (each capability exports its own from its folder). Each names the services
 * it uses; the CLI hands it the composition root's (`AppContext` has them all), or nothing when `needsContext` is
 * false.
 */
export type AnyCommand = Command<unknown, AppContext | undefined>;

export const commands: AnyCommand[] = [
  serveCommand,
  realtimeCommand,
  ...companyCommands,
  ...apiClientCommands,
  ...keyCommands,
  ...auditCommands,
  ...digitalEmployeeCommands,
  ...channelCommands,
  ...conversationCommands,
  ...userCommands,
  ...connectorCommands,
  ...masterKeyCommands,
  ...webhookCommands,
  ...privacyCommands,
  ...knowledgeCommands,
] as AnyCommand[];
