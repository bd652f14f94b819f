// The portal API's answers (`/portal/api`), declared once: the server's routes are typed to return them and the
// portal's pages to read them, so a field renamed on one side fails `npm run typecheck` on the other instead of
// showing an empty cell. Types only: nothing here runs, and the package imports nothing but the webchat protocol's
// types.

export type { AuditEntryView, AuditPage } from './audit.ts';
export type { ChannelEmployeeOption, ChannelView, IdentityMode } from './channels.ts';
export type { AttachmentLimitsView, CompanyView } from './company.ts';
export type { DigitalEmployeeOutcomes } from './outcomes.ts';
export type { Page } from './page.ts';
export type { AgentView, CannedResponseView, RoutingSettingsView } from './routing.ts';
export type { PortalUserView, SessionInfo } from './users.ts';
