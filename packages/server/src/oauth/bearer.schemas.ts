import { Type } from '@sinclair/typebox';

const BearerProblem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({
      description: 'token_required, invalid_request, invalid_token or insufficient_scope',
    }),
    instance: Type.Optional(Type.String()),
    required_scope: Type.Optional(Type.String()),
  },
  {
    additionalProperties: true,
    description: 'RFC 9457 problem; the WWW-Authenticate: Bearer header is the RFC 6750 contract',
  },
);

/**
 * Response schemas of the bearer hook's failures, to spread into a protected route's `response` so OpenAPI shows
 * them: `response: { 200: MyBody, ...bearerErrorResponses }`.
 */
export const bearerErrorResponses = {
  400: BearerProblem,
  401: BearerProblem,
  403: BearerProblem,
};
