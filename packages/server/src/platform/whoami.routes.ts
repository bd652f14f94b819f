import { Type } from '@sinclair/typebox';
import type { App } from '../http/types.ts';
import { bearerErrorResponses } from '../oauth/bearer.schemas.ts';
import { principalOf } from '../oauth/principal.ts';

const Whoami = Type.Object({
  client_id: Type.String({ examples: ['pcl_4Jw0l4m2mZ5pO7wO1nTtqS'] }),
  company_id: Type.String({ format: 'uuid' }),
  scopes: Type.Array(Type.String(), { examples: [['connector:write']] }),
});

/** `GET /platform/v1/auth/whoami`: who the presented access token speaks for (any valid token). */
export function registerWhoamiRoute(app: App): void {
  app.get(
    '/platform/v1/auth/whoami',
    {
      config: { requiredScope: null },
      schema: {
        tags: ['platform'],
        summary: 'Describe the calling API client',
        description: 'Answers for the client and company of the bearer token; needs no particular scope.',
        security: [{ bearer: [] }],
        response: { 200: Whoami, ...bearerErrorResponses },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return { client_id: principal.clientId, company_id: principal.companyId, scopes: principal.scopes };
    },
  );
}
