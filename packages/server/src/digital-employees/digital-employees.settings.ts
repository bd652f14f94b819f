import { INTERACTIVE_LIMITS, readInteractiveBlocks } from '@parley/webchat-protocol';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { InvalidDigitalEmployeeError } from './digital-employees.errors.ts';

export const RESPONDERS = ['builtin', 'webhook', 'openai'] as const;
export type ResponderKind = (typeof RESPONDERS)[number];
export const isResponderKind = (value: unknown): value is ResponderKind =>
  typeof value === 'string' && (RESPONDERS as readonly string[]).includes(value);

export const BuiltinAnswerSchema = Type.Object(
  {
    /** The question as people see it in the portal; not used for matching. */
    question: Type.String({ minLength: 1, maxLength: 500 }),
    /** Words or phrases matched case-insensitively on word boundaries; the answer with the most hits wins. */
    keywords: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 20 }),
    answer: Type.String({ minLength: 1, maxLength: 4000 }),
    /**
     * Quick replies offered under the answer (docs/design.md "Interactive blocks"); a tapped one comes back as a
     * postback whose label is the visitor's text, so give the next answers keywords that match the labels.
     */
    quick_replies: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.String({ minLength: 1, maxLength: INTERACTIVE_LIMITS.idLength }),
            label: Type.String({ minLength: 1, maxLength: INTERACTIVE_LIMITS.labelLength }),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: INTERACTIVE_LIMITS.options },
      ),
    ),
  },
  { additionalProperties: false },
);
export type BuiltinAnswer = Static<typeof BuiltinAnswerSchema>;

/**
 * Per-digital-employee settings, stored as one JSON object. `greeting` applies to every responder (posted when a
 * conversation is created); `answers`, `fallback` and `word_delay_ms` only to builtin; `timeout_ms` and
 * `history_limit` only to webhook and openai; `handover_tool` only to openai (the one responder offered tools).
 */
export const DigitalEmployeeSettingsSchema = Type.Object(
  {
    greeting: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 4000 }), Type.Null()])),
    answers: Type.Optional(Type.Array(BuiltinAnswerSchema, { maxItems: 200 })),
    fallback: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
    /** Pause between streamed words, so the streaming path (typing → growing partials → complete) always runs. */
    word_delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 2000 })),
    /** Longest silence tolerated from the bot: until response headers, and between two streamed chunks. */
    timeout_ms: Type.Optional(Type.Integer({ minimum: 50, maximum: 600_000 })),
    /** How many earlier messages are sent along (the newest ones). */
    history_limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 500 })),
    /**
     * Whether the model is offered the built-in `handover` tool (default true). Off, the model cannot hand over by
     * itself; visitors still can (`request_human`, the "talk to a person" option).
     */
    handover_tool: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type DigitalEmployeeSettings = Static<typeof DigitalEmployeeSettingsSchema>;

export const SETTINGS_DEFAULTS = {
  fallback: "Sorry, I don't know the answer to that yet. A colleague can help you with it.",
  wordDelayMs: 20,
  timeoutMs: { webhook: 30_000, openai: 60_000 },
  historyLimit: 50,
  handoverTool: true,
} as const;

export const BUILTIN_ONLY_SETTINGS = ['answers', 'fallback', 'word_delay_ms'] as const;
export const REMOTE_ONLY_SETTINGS = ['timeout_ms', 'history_limit'] as const;
export const OPENAI_ONLY_SETTINGS = ['handover_tool'] as const;

/** Which settings a responder refuses (those of the other kinds); a change of responder drops them. */
export const SETTINGS_REFUSED_BY: Record<ResponderKind, readonly (keyof DigitalEmployeeSettings)[]> = {
  builtin: [...REMOTE_ONLY_SETTINGS, ...OPENAI_ONLY_SETTINGS],
  webhook: [...BUILTIN_ONLY_SETTINGS, ...OPENAI_ONLY_SETTINGS],
  openai: BUILTIN_ONLY_SETTINGS,
};

/** Validates settings for a responder kind; throws `invalid_settings` naming the first offending field. */
export function validateSettings(responder: ResponderKind, input: unknown): DigitalEmployeeSettings {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidDigitalEmployeeError('invalid_settings', 'settings', 'settings must be a JSON object');
  }
  const first = Value.Errors(DigitalEmployeeSettingsSchema, input).First();
  if (first) {
    const field = `settings${first.path.replace(/\//g, '.')}`;
    throw new InvalidDigitalEmployeeError('invalid_settings', field, `${field} ${first.message}`);
  }
  const settings = input as DigitalEmployeeSettings;
  for (const [i, answer] of (settings.answers ?? []).entries()) {
    if (!answer.quick_replies) continue;
    // The protocol's own rules beyond the schema: no blank label, no id twice.
    const { problem } = readInteractiveBlocks(
      [{ type: 'quick_replies', options: answer.quick_replies }],
      'q',
    );
    if (problem) {
      const field = `settings.answers.${i}.quick_replies`;
      throw new InvalidDigitalEmployeeError('invalid_settings', field, `${field}: ${problem.message}`);
    }
  }
  const misplaced = SETTINGS_REFUSED_BY[responder].find((key) => settings[key] !== undefined);
  if (misplaced) {
    throw new InvalidDigitalEmployeeError(
      'invalid_settings',
      `settings.${misplaced}`,
      `settings.${misplaced} does not apply to a ${responder} digital employee`,
    );
  }
  return settings;
}
