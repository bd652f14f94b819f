// The portal API's answers (`/portal/api`), declared once: the server's routes are typed to return them and the
// portal's pages to read them, so a field renamed on one side fails `npm run typecheck` on the other instead of
// showing an empty cell. Types only: nothing here runs, and the package imports nothing but the webchat protocol's
// types (whose conversation, message and note shapes the inbox answers reuse, as the realtime engine publishes them).

export type {
  ApiClientListing,
  ApiClientQuotasAnswer,
  ApiClientQuotasView,
  ApiClientSecretList,
  ApiClientSecretView,
  ApiClientView,
  CreatedApiClientView,
  RotatedClientSecretView,
} from './api-clients.ts';
export type { AuditEntryView, AuditPage } from './audit.ts';
export type {
  ChannelEmployeeOption,
  ChannelIdentityView,
  ChannelListing,
  ChannelView,
  IdentityMode,
} from './channels.ts';
export type { AttachmentLimitsView, CompanyView } from './company.ts';
export type {
  ConnectorCheckView,
  ConnectorListing,
  ConnectorTypeView,
  ConnectorView,
  KeyRotationView,
} from './connectors.ts';
export type {
  BuiltinAnswerView,
  ConnectorOptionView,
  DigitalEmployeeListItem,
  DigitalEmployeeListing,
  DigitalEmployeeSettingsView,
  DigitalEmployeeStatsView,
  DigitalEmployeeView,
  ResponderKind,
} from './digital-employees.ts';
export type {
  CompanyLabelsView,
  ConversationLabelsView,
  ConversationSummaryView,
  HandoverSummaryView,
  InboxConversationDetail,
  InboxConversationPage,
  InboxQueue,
  InboxSearchPage,
  MessageMatchView,
  RealtimeGrantView,
  SuggestedRepliesView,
  SuggestedReplyView,
  VisitorPanelView,
  WorkspaceStatusView,
} from './inbox.ts';
export type {
  KnowledgeChunkList,
  KnowledgeChunkView,
  KnowledgeSearchAnswer,
  KnowledgeSearchResultView,
  KnowledgeSourceList,
  KnowledgeSourceView,
  KnowledgeSynonymsAnswer,
} from './knowledge.ts';
export type { DigitalEmployeeOutcomes } from './outcomes.ts';
export type { Page } from './page.ts';
export type { ErasureReceiptView, RetentionSettingsView } from './privacy.ts';
export type {
  AgentList,
  AgentView,
  CannedResponseList,
  CannedResponseView,
  RoutingSettingsView,
} from './routing.ts';
export type { RecentErrorView, SystemNodeView, SystemSnapshot, WebhookBacklogView } from './system.ts';
export type { PortalUserList, PortalUserView, SessionInfo } from './users.ts';
export type {
  CreatedWebhookView,
  WebhookDeliveryList,
  WebhookDeliveryView,
  WebhookListing,
  WebhookSecretView,
  WebhookView,
} from './webhooks.ts';
