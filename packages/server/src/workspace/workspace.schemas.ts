import { type Static, Type } from '@sinclair/typebox';
import { LABEL_LIMITS } from './workspace.service.ts';

/** `PUT …/conversations/{id}/status` (platform and portal alike). */
export const StatusBody = Type.Object(
  {
    status: Type.Union([Type.Literal('open'), Type.Literal('pending'), Type.Literal('snoozed')], {
      description:
        '`pending` waits on the visitor; `snoozed` parks it until `snoozed_until`. Both reopen when the visitor writes. Close with `POST …/close`.',
    }),
    snoozed_until: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 40,
        description: 'Required with `snoozed` (in the future, at most a year ahead); not allowed otherwise.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type StatusBody = Static<typeof StatusBody>;

export const StatusResponse = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('open'), Type.Literal('pending'), Type.Literal('snoozed')]),
  snoozed_until: Type.Union([Type.String(), Type.Null()]),
});

/** `PUT …/conversations/{id}/labels`: the whole set (trimmed, duplicates dropped, sorted). */
export const LabelsBody = Type.Object(
  {
    labels: Type.Array(Type.String({ minLength: 1, maxLength: LABEL_LIMITS.length }), {
      maxItems: LABEL_LIMITS.count,
      description: `At most ${LABEL_LIMITS.count} labels of 1–${LABEL_LIMITS.length} characters; replaces the conversation's labels.`,
    }),
  },
  { additionalProperties: false },
);

export const LabelsResponse = Type.Object({ id: Type.String(), labels: Type.Array(Type.String()) });
