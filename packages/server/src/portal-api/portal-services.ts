import type { AuditLog } from '../audit/audit.service.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { Config } from '../config/schema.ts';
import type { DigitalEmployeesService } from '../digital-employees/digital-employees.service.ts';
import type { ConnectorsService } from '../integrations/connectors.service.ts';
import type { OutboundClient } from '../integrations/outbound.ts';
import type { KnowledgeService } from '../knowledge/knowledge.service.ts';
import type { OAuthServices } from '../oauth/oauth.services.ts';
import type { Privacy } from '../privacy/privacy.module.ts';
import type { Webchat } from '../webchat/webchat.ts';
import type { Webhooks } from '../webhooks/webhooks.module.ts';
import type { Workspace } from '../workspace/workspace.ts';

/**
 * The capabilities' services the portal's pages call (each page's routes use a few of them). Declared here, by the
 * surface that uses them, so no portal route knows the composition root; app.ts hands them over.
 */
export interface PortalServices {
  config: Config;
  audit: AuditLog;
  companies: CompaniesService;
  oauth: Pick<OAuthServices, 'clients' | 'quotas'>;
  digitalEmployees: DigitalEmployeesService;
  connectors: ConnectorsService;
  connectorCaller: Pick<OutboundClient, 'check'>;
  webhooks: Pick<Webhooks, 'service'>;
  webchat: Webchat;
  workspace: Workspace;
  knowledge: KnowledgeService;
  privacy: Privacy;
}
