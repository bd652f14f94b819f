import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { App } from './types.ts';

/**
 * OpenAPI 3.1 generated from the route schemas (served as JSON at /docs/json, with a UI at /docs). Routes declare
 * `security` for bearer-protected operations so generated clients know which token to send.
 */
export async function registerOpenApi(app: App, publicUrl: string): Promise<void> {
  // CORS preflights and other OPTIONS handlers are plumbing, not operations of the API.
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (methods.includes('OPTIONS')) route.schema = { ...route.schema, hide: true };
  });
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
      servers: [{ url: publicUrl }],
      tags: [
        {
          name: 'oauth',
          description: 'Access tokens for API clients (OAuth 2.0 client credentials, RFC 9068).',
        },
        { name: 'platform', description: 'The calling API client.' },
        { name: 'integrations', description: 'Integration connectors and their write-only API keys.' },
        { name: 'conversations', description: 'Webchat conversations for agents and integrations (bearer).' },
        {
          name: 'digital-employees',
          description:
            'Actions of digital employees: what a model may call through http connectors (bearer).',
        },
        { name: 'webhooks', description: 'Event webhooks signed per Standard Webhooks (docs/webhooks.md).' },
        { name: 'privacy', description: "Erasure and export of a visitor's data (docs/privacy.md)." },
        {
          name: 'knowledge',
          description: 'Knowledge sources the digital employees answer from, and search (docs/knowledge.md).',
        },
        {
          name: 'webchat-sdk',
          description: 'What the webchat SDK and widget call (session headers, no token).',
        },
        { name: 'health', description: 'Liveness and readiness for load balancers and orchestrators.' },
        { name: 'operations', description: 'Prometheus metrics (docs/operations.md).' },
      ],
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
