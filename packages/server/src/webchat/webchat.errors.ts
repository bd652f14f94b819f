import { AppError } from '../errors/app-error.ts';

/**
 * Typed errors of the webchat REST surface (codes listed in docs/errors.md "Webchat"). Realtime refusals use the
 * numeric PUBLISH_CODES (messages/send-message.ts) instead, because the Centrifugo protocol carries numbers.
 */
export class WebchatError extends AppError {}

export const missingHeader = (name: string) =>
  new WebchatError(400, 'missing_header', `The ${name} header is required.`, { header: name });

export const invalidHeader = (name: string, expected: string) =>
  new WebchatError(400, 'invalid_header', `The ${name} header must be ${expected}.`, { header: name });

export const companyNotFound = () =>
  new WebchatError(404, 'company_not_found', 'No company has the id given in X-Company.');

export const channelNotFound = () =>
  new WebchatError(404, 'channel_not_found', 'No channel of this company has the id given in X-Channel-Id.');

/** Also the answer for another session's, company's or channel's conversation: existence is not revealed. */
export const conversationNotFound = () =>
  new WebchatError(404, 'conversation_not_found', 'No such conversation.');

export const originNotAllowed = () =>
  new WebchatError(403, 'origin_not_allowed', 'This Origin is not allowed for this company or channel.');

export const noDigitalEmployee = () =>
  new WebchatError(
    409,
    'no_digital_employee',
    'The company has no default digital employee to answer conversations.',
  );

export const conversationClosed = () =>
  new WebchatError(409, 'conversation_closed', 'The conversation is closed.');

export const invalidCursor = () =>
  new WebchatError(400, 'invalid_cursor', 'The before cursor is not a message of this conversation.');
