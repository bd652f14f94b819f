import { Type } from '@sinclair/typebox';
import { UUID_PATTERN } from '../uuid-pattern.ts';

/** An attachment of this conversation in an agent's post, uploaded first (docs/design.md "Attachments"). */
export const AttachmentBlockInput = Type.Object(
  { type: Type.Literal('attachment'), attachment_id: Type.String({ pattern: UUID_PATTERN }) },
  { additionalProperties: false, description: 'A file of this conversation, uploaded first, by its id.' },
);
