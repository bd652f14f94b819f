/**
 * The note a hand-over summary leaves in the transcript (docs/design.md "Hand-over summaries"): markdown under one
 * heading, written by the server (packages/server/src/webchat/notes/handover-summary.ts) and recognised by the
 * portal, which shows the newest one at the top of the conversation and only a marker for it in the transcript.
 * Writer and reader live here together so the two cannot drift.
 */

/** The heading every hand-over summary note starts with. */
export const HANDOVER_SUMMARY_HEADING = '**Hand-over summary**';

/** The note's markdown: the heading, then the summary. */
export function handoverSummaryNoteText(summary: string): string {
  return `${HANDOVER_SUMMARY_HEADING}\n\n${summary}`;
}

/** The summary a hand-over summary note holds (without its heading), or undefined for any other note. */
export function readHandoverSummaryNote(text: string): string | undefined {
  if (!text.startsWith(HANDOVER_SUMMARY_HEADING)) return undefined;
  return text.slice(HANDOVER_SUMMARY_HEADING.length).trim();
}
