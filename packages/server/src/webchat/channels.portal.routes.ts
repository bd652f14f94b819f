import type { ChannelEmployeeOption, ChannelListing, ChannelView } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { AuditLog } from '../audit/audit.service.ts';
import type { DigitalEmployeesService } from '../digital-employees/digital-employees.service.ts';
import { PageQuery, pageOf } from '../http/offset-page.ts';
import type { App } from '../http/types.ts';
import { actorOf, sessionOf } from '../users/portal-session.ts';
import type { Channel, ChannelsService } from './channels/channels.service.ts';
import type { ChannelIdentity } from './identity/channel-identity.ts';

const CreateChannel = Type.Object(
  {
    name: Type.String({ maxLength: 1000 }),
    digital_employee_id: Type.String({ maxLength: 100 }),
    allowed_origins: Type.Optional(Type.Array(Type.String({ maxLength: 300 }), { maxItems: 50 })),
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const IdentityBody = Type.Object(
  {
    mode: Type.Union([Type.Literal('off'), Type.Literal('optional'), Type.Literal('required')]),
    rotate_secret: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** The tag a website pastes to embed the widget for one channel (served by the widget capability at /widget.js). */
export const widgetSnippet = (publicUrl: string, companyId: string, channelId: string): string =>
  `<script src="${publicUrl}/widget.js" data-company="${companyId}" data-channel="${channelId}"></script>`;

/**
 * Settings → Channels, over the webchat capability's ChannelsService (it checks that the digital employee belongs
 * to the company and normalises origins). Each row carries its ready-to-paste widget snippet.
 */
/** What Settings → Channels uses. */
export interface ChannelPortalDeps {
  channels: ChannelsService;
  identity: Pick<ChannelIdentity, 'configure'>;
  digitalEmployees: Pick<DigitalEmployeesService, 'list'>;
  audit: Pick<AuditLog, 'record'>;
  /** Where the widget is served from (PARLEY_PUBLIC_URL), read per use: a test server learns it after listen. */
  publicUrl(): string;
}

export function registerChannelPortalRoutes(app: App, deps: ChannelPortalDeps): void {
  const { channels } = deps;

  const employeesOf = async (companyId: string): Promise<ChannelEmployeeOption[]> =>
    (await deps.digitalEmployees.list(companyId)).map((e) => ({
      id: e.id,
      name: e.name,
      is_default: e.isDefault,
    }));

  const view = (c: Channel, employees: Array<{ id: string; name: string }>): ChannelView => ({
    id: c.id,
    name: c.name,
    digital_employee: {
      id: c.digitalEmployeeId,
      name: employees.find((e) => e.id === c.digitalEmployeeId)?.name ?? null,
    },
    allowed_origins: c.allowedOrigins,
    created_at: c.createdAt,
    snippet: widgetSnippet(deps.publicUrl(), c.companyId, c.id),
    // Never the secret itself: only whether there is one and until when the previous one still verifies.
    identity: c.identity.mode,
    identity_secret_set: c.identity.sealedSecret !== null,
    identity_previous_secret_until:
      c.identity.previousUntil && Date.parse(c.identity.previousUntil) > Date.now()
        ? c.identity.previousUntil
        : null,
  });

  app.get('/channels', { schema: { querystring: PageQuery } }, async (request) => {
    const companyId = sessionOf(request).user.companyId;
    const employees = await employeesOf(companyId);
    const page = pageOf(await channels.list(companyId), request.query);
    return {
      ...page,
      items: page.items.map((c) => view(c, employees)),
      digital_employees: employees,
    } satisfies ChannelListing;
  });

  app.post('/channels', { schema: { body: CreateChannel } }, async (request, reply) => {
    const companyId = sessionOf(request).user.companyId;
    const channel = await channels.create({
      companyId,
      name: request.body.name,
      digitalEmployeeId: request.body.digital_employee_id,
      allowedOrigins: (request.body.allowed_origins ?? []).map((o) => o.trim()).filter(Boolean),
    });
    await deps.audit.record({
      type: 'channel.created',
      companyId,
      actor: actorOf(request),
      subject: channel.id,
      ip: request.ip,
    });
    return reply.status(201).send(view(channel, await employeesOf(companyId)));
  });

  // Visitor identity (the portal's `parley channels identity`): the answer holds the secret only when the channel
  // got one just now (its first, or a rotation); the page shows it once.
  app.put('/channels/:id/identity', { schema: { params: IdParams, body: IdentityBody } }, async (request) => {
    const companyId = sessionOf(request).user.companyId;
    return deps.identity.configure(
      companyId,
      request.params.id,
      { mode: request.body.mode, rotateSecret: request.body.rotate_secret === true },
      { id: actorOf(request), ip: request.ip },
    );
  });
}
