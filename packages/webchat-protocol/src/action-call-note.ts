/**
 * The internal note an action call of a digital employee leaves in the transcript (docs/design.md "Actions"): the
 * server writes it as markdown text that reads well anywhere notes show (platform API, webhooks, CLI), and the
 * portal reads it back to show a compact card. Writer and reader live here together so the two cannot drift.
 */

export interface ActionCallNote {
  /** The action's name, or `handover` for the built-in tool. */
  action: string;
  /** How it ended: `ok`, `http_error`, `invalid_arguments`, `timeout`, `failed`, `too_large` (ActionOutcome in
   * packages/server/src/digital-employees/actions/action-runner.ts). */
  outcome: string;
  /** The connector's HTTP status, when it answered. */
  status: number | null;
  durationMs: number;
  /** The model's arguments (JSON text), possibly cut to an excerpt. */
  arguments: string;
  /** What went back to the model: the response body or `{"error": …}`, possibly cut to an excerpt. */
  result: string;
}

/** How much of an action's arguments and result a note shows (the model got the whole result). */
export const ACTION_NOTE_EXCERPT_CHARS = 1500;

const FENCE = '```';

const excerpt = (text: string) =>
  text.length > ACTION_NOTE_EXCERPT_CHARS
    ? `${text.slice(0, ACTION_NOTE_EXCERPT_CHARS)}… (${text.length} characters)`
    : text;

/** The note's markdown: what was called, how it went, what came back. */
export function actionCallNoteText(call: ActionCallNote): string {
  const how = call.status !== null ? `HTTP ${call.status}, ${call.outcome}` : call.outcome;
  return [
    `Action \`${call.action}\` — ${how} in ${call.durationMs} ms`,
    '',
    // A backtick would end the inline code span early; a fence inside the block would end the block.
    `Arguments: \`${excerpt(call.arguments || '{}').replaceAll('`', "'")}\``,
    '',
    'Result:',
    FENCE,
    excerpt(call.result).replaceAll(FENCE, "'''"),
    FENCE,
  ].join('\n');
}

const NOTE_SHAPE =
  /^Action `([a-z0-9_]{1,64})` — (?:HTTP (\d{3}), )?([a-z_]+) in (\d+) ms\n\nArguments: `([^`]*)`\n\nResult:\n```\n([\s\S]*)\n```$/;

/** The call a note describes, or `undefined` when the text is not an action-call note. */
export function readActionCallNote(text: string): ActionCallNote | undefined {
  const m = NOTE_SHAPE.exec(text.trim());
  if (!m) return undefined;
  return {
    action: m[1]!,
    status: m[2] === undefined ? null : Number(m[2]),
    outcome: m[3]!,
    durationMs: Number(m[4]),
    arguments: m[5]!,
    result: m[6]!,
  };
}
