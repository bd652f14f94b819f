/**
 * Every stable error code Parley answers with, in one union: the `code` of problem+json bodies, the `error` of the
 * token endpoint (RFC 6749 §5.2) and of bearer challenges (RFC 6750 §3.1), the `error.code` of the CLI's `--json`
 * output, and the codes of error blocks in webchat messages. docs/errors.md lists each one with its status and
 * meaning; `errors/codes.test.ts` fails when the two disagree.
 */
export const ERROR_CODES = [
  // Common to every problem+json route (http/problem.ts, http/edge.ts).
  'validation_failed',
  'invalid_json',
  'bad_request',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'route_not_found',
  'method_not_allowed',
  'malformed_url',
  'path_parameter_too_long',
  'malformed_request',
  'request_timeout',
  'headers_too_large',
  'too_many_connections',
  'internal_error',
  'store_unavailable',
  'broker_unavailable',
  'company_not_found',
  'invalid_name',
  // Privacy (privacy/): erasure and export selectors.
  'invalid_privacy_selector',
  // Idempotency-Key on message posts (idempotency/idempotent-post.ts).
  'idempotency_key_reused',
  'idempotency_key_in_use',
  // Operations (metrics/metrics.routes.ts).
  'metrics_token_invalid',
  // Token endpoint (RFC 6749 §5.2 `error`; oauth/oauth-errors.ts).
  'invalid_request',
  'invalid_client',
  'unsupported_grant_type',
  'invalid_scope',
  'slow_down',
  'temporarily_unavailable',
  'server_error',
  // Bearer-protected routes (RFC 6750; oauth/bearer-auth.ts).
  'token_required',
  'invalid_token',
  'insufficient_scope',
  // DPoP (RFC 9449 §12.2 registry; oauth/dpop.ts): at the token endpoint and on protected routes.
  'invalid_dpop_proof',
  'use_dpop_nonce',
  // API clients.
  'invalid_scopes',
  'api_client_not_found',
  // Machine access, third round (oauth/api-clients.service.ts, docs/machine-access.md).
  'api_client_secret_not_found',
  'last_client_secret',
  'invalid_expiry',
  'wrong_auth_method',
  'invalid_client_keys',
  'invalid_dpop_policy',
  // Per-client quotas (oauth/client-quotas.ts).
  'invalid_quota',
  'client_quota_exceeded',
  // Connectors, outbound calls, master keys.
  'connector_not_found',
  'precondition_failed',
  'rotation_conflict',
  'invalid_type',
  'invalid_url',
  'invalid_api_key',
  'connector_key_not_set',
  'connector_key_unreadable',
  'connector_unreachable',
  'connector_timeout',
  'connector_destination_blocked',
  'connector_redirect_refused',
  'connector_bad_response',
  'connector_url_invalid',
  'master_key_not_found',
  'master_key_current',
  'master_key_in_use',
  'master_key_primary_pinned',
  'invalid_master_keys',
  // Digital employees.
  'digital_employee_not_found',
  'invalid_responder',
  'connector_required',
  'connector_not_allowed',
  'connector_type_mismatch',
  'invalid_model',
  'invalid_system_prompt',
  'invalid_settings',
  'default_digital_employee_required',
  'digital_employee_in_use',
  // Webchat REST and agent actions.
  'missing_header',
  'invalid_header',
  'channel_not_found',
  'conversation_not_found',
  'invalid_cursor',
  'origin_not_allowed',
  'no_digital_employee',
  'conversation_closed',
  'message_too_large',
  'empty_message',
  // Interactive blocks (webchat/interactive/).
  'invalid_blocks',
  'postback_not_offered',
  // Visitor identity, feedback and read state (webchat/identity/, webchat/feedback/, webchat/reads/).
  'visitor_token_invalid',
  'visitor_token_required',
  'message_not_found',
  'feedback_not_allowed',
  'action_not_found',
  'invalid_action',
  'action_name_taken',
  'conversation_open',
  // Routing, business hours, canned responses (webchat/routing/, webchat/canned-responses/).
  'agent_not_found',
  'invalid_business_hours',
  'canned_response_not_found',
  'shortcut_taken',
  // Event webhooks (webhooks/).
  'webhook_not_found',
  'webhook_delivery_not_found',
  'invalid_events',
  'invalid_description',
  'webhook_disabled',
  // Attachments (webchat/attachments/).
  'attachment_too_large',
  'attachment_type_not_allowed',
  'attachment_required',
  'attachment_link_invalid',
  'unknown_attachment',
  // Knowledge sources and search (knowledge/).
  'knowledge_source_not_found',
  'invalid_knowledge_source',
  'knowledge_source_too_large',
  'knowledge_type_not_supported',
  'invalid_knowledge_synonyms',
  // Portal and users.
  'not_signed_in',
  'invalid_credentials',
  'csrf_failed',
  'forbidden_role',
  'invalid_email',
  'weak_password',
  'invalid_role',
  'email_taken',
  'user_not_found',
  'invalid_origin',
  // The CLI's own: a malformed command line (exit code 2), an invalid configuration, a sealed value that does not
  // open during `master-key rotate`.
  'usage',
  'invalid_config',
  'seal_integrity',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Codes of `{"type":"error"}` blocks that end a webchat message which could not finish (docs/errors.md). */
export const ERROR_BLOCK_CODES = [
  'responder_timeout',
  'responder_http_error',
  'responder_bad_response',
  'responder_unreachable',
  'responder_misconfigured',
  'responder_aborted',
  'responder_failed',
  'empty_reply',
  'reply_interrupted',
] as const;

export type ErrorBlockCode = (typeof ERROR_BLOCK_CODES)[number];
