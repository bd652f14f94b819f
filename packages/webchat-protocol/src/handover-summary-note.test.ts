import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { handoverSummaryNoteText, readHandoverSummaryNote } from './handover-summary-note.ts';

describe('hand-over summary notes', () => {
  it('reads back the summary the writer put under the heading', () => {
    const text = handoverSummaryNoteText('The visitor asks about **returns**.');
    assert.equal(readHandoverSummaryNote(text), 'The visitor asks about **returns**.');
  });

  it('reads no summary from any other note', () => {
    assert.equal(readHandoverSummaryNote('Refund approved by finance'), undefined);
    assert.equal(readHandoverSummaryNote('A note about the **Hand-over summary**'), undefined);
  });
});
