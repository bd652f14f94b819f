import type { ChatMessage, FeedbackRating } from '@parley/webchat-sdk';
import { builder, icon } from './dom.ts';
import type { WidgetStrings } from './strings/en.ts';

/** Thumb icons drawn as SVG paths (Material Icons `thumb_up` / `thumb_down`): no emoji font needed. */
const THUMB_PATHS: Record<FeedbackRating, string> = {
  up: 'M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z',
  down: 'M15 3H6c-.83 0-1.54.5-1.84 1.22l-3.02 7.05c-.09.23-.14.47-.14.73v2c0 1.1.9 2 2 2h6.31l-.95 4.57-.03.32c0 .41.17.79.44 1.06L9.83 23l6.59-6.59c.36-.36.58-.86.58-1.41V5c0-1.1-.9-2-2-2zm4 0v12h4V3h-4z',
};

/**
 * Thumbs up and down under a message — toggle buttons (`aria-pressed`) reachable with the keyboard — and, once a
 * thumb is pressed, an optional one-line comment. `rate` stores the rating (and comment) on the server.
 */
export function thumbsFor(
  doc: Document,
  message: ChatMessage,
  strings: WidgetStrings,
  rate: (rating: FeedbackRating, comment?: string) => Promise<void>,
): HTMLElement {
  const el = builder(doc);
  const box = el('div', { class: 'feedback', role: 'group', 'aria-label': strings.rateMessage });
  const current = message.feedback?.rating;
  const thumb = (rating: FeedbackRating, label: string) => {
    const button = el('button', {
      type: 'button',
      class: `thumb ${rating}`,
      'aria-label': label,
      title: label,
    });
    button.append(icon(doc, THUMB_PATHS[rating]));
    button.setAttribute('aria-pressed', String(current === rating));
    button.addEventListener('click', () => void rate(rating).catch(() => {}));
    return button;
  };
  box.append(thumb('up', strings.helpful), thumb('down', strings.notHelpful));
  if (current && !message.feedback?.comment) {
    const form = el('form', { class: 'feedback-comment' });
    const id = `parley-comment-${message.key}`;
    const label = el('label', { class: 'sr-only', for: id }, strings.feedbackCommentLabel);
    const input = el('input', {
      id,
      type: 'text',
      maxlength: '2000',
      placeholder: strings.feedbackCommentPlaceholder,
    });
    const send = el('button', { type: 'submit' }, strings.sendFeedback);
    form.append(label, input, send);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const comment = input.value.trim();
      if (comment) void rate(current, comment).catch(() => {});
    });
    box.append(form);
  } else if (message.feedback?.comment) {
    box.append(el('span', { class: 'thanks' }, strings.feedbackThanks));
  }
  return box;
}

/**
 * The satisfaction question shown when the conversation is closed: five scores as a radio group (arrow keys move
 * between them, as native radios do), an optional comment and a submit button; then a thank-you.
 */
export function csatPrompt(
  doc: Document,
  strings: WidgetStrings,
  submit: (score: number, comment?: string) => Promise<void>,
): HTMLElement {
  const el = builder(doc);
  const form = el('form', { class: 'csat', 'aria-labelledby': 'parley-csat-title' });
  const fieldset = el('fieldset');
  fieldset.append(el('legend', { id: 'parley-csat-title' }, strings.csatQuestion));
  const scores = el('div', { class: 'scores' });
  const labels = [strings.csat1, strings.csat2, strings.csat3, strings.csat4, strings.csat5];
  labels.forEach((text, i) => {
    const id = `parley-csat-${i + 1}`;
    const input = el('input', { type: 'radio', name: 'parley-csat', id, value: String(i + 1) });
    const label = el('label', { for: id, title: text });
    label.append(
      el('span', { 'aria-hidden': 'true' }, String(i + 1)),
      el('span', { class: 'sr-only' }, text),
    );
    scores.append(input, label);
  });
  fieldset.append(scores);
  const commentId = 'parley-csat-comment';
  const comment = el('textarea', { id: commentId, rows: '2', maxlength: '2000' });
  const button = el('button', { type: 'submit' }, strings.csatSubmit);
  const error = el('p', { class: 'csat-error', role: 'alert' });
  error.hidden = true;
  form.append(
    fieldset,
    el('label', { for: commentId, class: 'csat-comment-label' }, strings.csatCommentLabel),
    comment,
    button,
    error,
  );
  scores.addEventListener('change', () => {
    error.hidden = true;
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = form.querySelector<HTMLInputElement>('input[name="parley-csat"]:checked');
    if (!chosen) {
      error.textContent = strings.csatChoose;
      error.hidden = false;
      return;
    }
    button.disabled = true;
    submit(Number(chosen.value), comment.value.trim() || undefined).then(
      () => {
        form.replaceChildren(el('p', { class: 'csat-thanks', role: 'status' }, strings.csatThanks));
      },
      () => {
        button.disabled = false;
        error.textContent = strings.csatFailed;
        error.hidden = false;
      },
    );
  });
  return form;
}
