import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { AppContext } from '../context.ts';
import type { App } from './types.ts';

/**
 * OpenAPI 3.1 generated from the route schemas (served as JSON at /docs/json, with a UI at /docs). Routes declare
 * `security` for bearer-protected operations so generated clients know which token to send.
 */
export async function registerOpenApi(app: App, ctx: AppContext): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Parley API',
        version: '1.0.0',
        description:
          'Machine-to-machine access (OAuth 2.0 client credentials), connector API-key rotation and the webchat SDK API.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: ctx.config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          clientBasic: { type: 'http', scheme: 'basic' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
}
