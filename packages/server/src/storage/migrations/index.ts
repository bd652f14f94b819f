import type { Migration } from 'kysely';
import * as m001 from './001_companies_and_audit.ts';
import * as m002 from './002_oauth.ts';
import * as m010 from './010_connectors.ts';
import * as m020 from './020_webchat.ts';
import * as m021 from './021_reply_jobs.ts';
import * as m022 from './022_visitor_identity.ts';
import * as m023 from './023_read_feedback.ts';
import * as m024 from './024_attachments.ts';
import * as m030 from './030_digital_employees.ts';
import * as m040 from './040_portal_users.ts';
import * as m050 from './050_webhooks.ts';
import * as m060 from './060_routing.ts';
import * as m061 from './061_canned_responses.ts';
import * as m062 from './062_message_search.ts';
import * as m063 from './063_message_search_complete.ts';
import * as m070 from './070_idempotency_keys.ts';
import * as m073 from './073_scheduled_jobs.ts';
import * as m074 from './074_attachment_lifetime.ts';
import * as m081 from './081_neutral_default_digital_employee.ts';
import * as m082 from './082_portal_user_names.ts';
import * as m100 from './100_knowledge.ts';
import * as m110 from './110_notes.ts';
import * as m111 from './111_digital_employee_actions.ts';
import * as m120 from './120_agent_workspace.ts';
import * as m130 from './130_privacy.ts';
import * as m140 from './140_api_client_secrets.ts';
import * as m160 from './160_knowledge_search_speed.ts';
import * as m200 from './200_api_client_dpop.ts';
import * as m210 from './210_api_client_quotas.ts';
import * as m300 from './300_knowledge_search_index_direct.ts';
import * as m320 from './320_knowledge_search_lookups.ts';
import * as m330 from './330_knowledge_synonyms.ts';

/**
 * Every migration, in order. Names sort lexically; ranges by capability keep parallel work from colliding:
 * 001–009 foundation/OAuth, 010–019 connectors, 020–039 webchat, 040–049 portal, 050–059 webhooks, 060–069
 * routing, canned responses and search, 070–079 hostile input and faults (070 idempotency keys, 073–074 scheduled
 * jobs and attachment lifetime), 081–082 the first-run fixes (default digital employee, display names), 100–109
 * knowledge, 110–119 notes, actions and hand-over summaries, 120–129 the agent workspace, 130–139 privacy (erasure
 * receipts, retention settings), 140–149 machine access (client secrets, revocation, used assertion ids),
 * 160–169 knowledge search speed and typo tolerance, 200–209 DPoP, 210–219 per-client quotas,
 * 300–309 knowledge search latency on PostgreSQL, 320 its lookups, 330 company synonyms for knowledge search.
 */
export const migrations: Record<string, Migration> = {
  '001_companies_and_audit': m001,
  '010_connectors': m010,
  '002_oauth': m002,
  '020_webchat': m020,
  '021_reply_jobs': m021,
  '022_visitor_identity': m022,
  '023_read_feedback': m023,
  '024_attachments': m024,
  '030_digital_employees': m030,
  '040_portal_users': m040,
  '050_webhooks': m050,
  '060_routing': m060,
  '061_canned_responses': m061,
  '062_message_search': m062,
  '063_message_search_complete': m063,
  '070_idempotency_keys': m070,
  '073_scheduled_jobs': m073,
  '074_attachment_lifetime': m074,
  '081_neutral_default_digital_employee': m081,
  '082_portal_user_names': m082,
  '100_knowledge': m100,
  '110_notes': m110,
  '111_digital_employee_actions': m111,
  '120_agent_workspace': m120,
  '130_privacy': m130,
  '140_api_client_secrets': m140,
  '160_knowledge_search_speed': m160,
  '200_api_client_dpop': m200,
  '210_api_client_quotas': m210,
  '300_knowledge_search_index_direct': m300,
  '320_knowledge_search_lookups': m320,
  '330_knowledge_synonyms': m330,
};
