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

/** A visitor token that does not verify; `detail` names the rule it broke, never the token. */
export const visitorTokenInvalid = (detail: string) => new WebchatError(401, 'visitor_token_invalid', detail);

export const visitorTokenRequired = () =>
  new WebchatError(
    401,
    'visitor_token_required',
    'This channel only serves verified visitors: send their visitor token in X-Visitor-Token.',
  );

/** Also the answer for a message of another conversation: existence is not revealed. */
export const messageNotFound = () =>
  new WebchatError(404, 'message_not_found', 'No such message in this conversation.');

export const feedbackNotAllowed = () =>
  new WebchatError(
    409,
    'feedback_not_allowed',
    'Only complete messages of the digital employee or an agent can be rated.',
  );

export const conversationOpen = () =>
  new WebchatError(409, 'conversation_open', 'The conversation can be rated once it is closed.');

/** A note the notes route cannot store (docs/design.md "Internal notes"): `detail` names the rule. */
export const invalidNote = (detail: string) =>
  new WebchatError(400, 'validation_failed', `Invalid note: ${detail}`);
