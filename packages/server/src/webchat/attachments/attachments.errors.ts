import { AppError } from '../../errors/app-error.ts';

/** Typed errors of attachments (docs/errors.md "Attachments"); every one is a problem, never a 500. */
export class AttachmentError extends AppError {}

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/** The rest of the refused upload is not read for long (attachments.routes.ts `lingerThenClose`). */
export const attachmentTooLarge = (maxBytes: number) =>
  new AttachmentError(413, 'attachment_too_large', `An attachment may hold at most ${mib(maxBytes)}.`, {
    max_attachment_bytes: maxBytes,
  });

export const attachmentTypeNotAllowed = (detail: string) =>
  new AttachmentError(415, 'attachment_type_not_allowed', detail);

export const attachmentRequired = () =>
  new AttachmentError(
    400,
    'attachment_required',
    'Send multipart/form-data with exactly one file part named "file".',
  );

/** Bad or expired signature, or a signature made for another attachment: existence is not revealed. */
export const attachmentLinkInvalid = () =>
  new AttachmentError(403, 'attachment_link_invalid', 'This attachment link is invalid or has expired.');

/** A message block names an attachment that is not one of this conversation's. */
export const unknownAttachment = (index: number) =>
  new AttachmentError(
    400,
    'unknown_attachment',
    `blocks[${index}] names no attachment of this conversation.`,
    {
      errors: [
        { field: `blocks.${index}.attachment_id`, message: 'is not an attachment of this conversation' },
      ],
    },
  );
