import { ApiError } from '../../api.ts';
import { statusArea } from '../../components/page-parts.ts';
import { h, replaceChildren } from '../../dom.ts';
import { attachCannedMenu } from './canned-menu.ts';
import { PendingFiles, QuickReplyChips } from './chips.ts';
import type { Drafts } from './drafts.ts';
import { renderMarkdown } from './markdown.ts';
import { attachMentionMenu } from './mention-menu.ts';
import { type Colleague, mentionedIds } from './mentions.ts';

export interface ReplyInput {
  content: string;
  files: File[];
  quickReplies: string[];
}

export interface ComposerOptions {
  conversationId: string;
  drafts: Drafts;
  colleagues: () => Promise<Colleague[]>;
  sendReply(input: ReplyInput): Promise<void>;
  sendNote(text: string, mentions: string[]): Promise<void>;
}

/**
 * The composer docked under the transcript: markdown with a preview (the widget's renderer, what the visitor will
 * see), `/` canned responses, files by picker, drop or paste, quick replies as chips, Enter sends and Shift+Enter
 * breaks the line, a draft per conversation, and a Note mode for private notes with `@` mentions.
 */
export class Composer {
  readonly el: HTMLFormElement;
  readonly box: HTMLTextAreaElement;
  private mode: 'reply' | 'note' = 'reply';
  private readonly chips = new QuickReplyChips(10);
  private readonly files = new PendingFiles();
  private readonly feedback = statusArea();
  private readonly preview = h('div', { class: 'composer-preview', 'aria-label': 'Preview', hidden: true });
  private readonly send = h('button', { type: 'submit' }, 'Send reply');
  private readonly mentions: { el: HTMLElement; picked: Colleague[] };
  private readonly modeButtons: Record<'reply' | 'note', HTMLButtonElement>;

  constructor(private readonly o: ComposerOptions) {
    this.box = h('textarea', {
      class: 'composer-box',
      rows: 2,
      maxlength: 16384,
      'aria-label': 'Reply as agent',
    });
    this.modeButtons = { reply: this.modeButton('reply', 'Reply'), note: this.modeButton('note', 'Note') };
    this.mentions = attachMentionMenu(this.box, o.colleagues, () => this.mode === 'note');
    this.el = h('form', { class: 'composer', 'data-mode': 'reply', novalidate: true });
    this.layout();
    this.wire();
    const draft = o.drafts.get(o.conversationId);
    if (draft) {
      this.box.value = draft.text;
      this.setMode(draft.mode, false);
    }
  }

  /** Puts text at the caret (a suggested reply): inserted for the agent to read and edit, never sent by itself. */
  insert(text: string): void {
    this.setMode('reply');
    const at = this.box.selectionStart ?? this.box.value.length;
    const end = this.box.selectionEnd ?? at;
    this.box.value = this.box.value.slice(0, at) + text + this.box.value.slice(end);
    this.box.setSelectionRange(at + text.length, at + text.length);
    this.box.focus();
    this.saveDraft();
  }

  focus(): void {
    this.box.focus();
  }

  private modeButton(mode: 'reply' | 'note', label: string): HTMLButtonElement {
    return h(
      'button',
      {
        type: 'button',
        class: 'mode',
        'aria-pressed': mode === 'reply' ? 'true' : 'false',
        onclick: () => this.setMode(mode),
      },
      label,
    );
  }

  /** `save` is false while the composer is being built: saving then would overwrite the stored draft with nothing. */
  private setMode(mode: 'reply' | 'note', save = true): void {
    this.mode = mode;
    this.el.dataset.mode = mode;
    for (const m of ['reply', 'note'] as const)
      this.modeButtons[m].setAttribute('aria-pressed', String(m === mode));
    this.box.setAttribute('aria-label', mode === 'note' ? 'Private note' : 'Reply as agent');
    this.box.placeholder =
      mode === 'note'
        ? 'Only colleagues see notes. @ mentions a colleague.'
        : 'Reply… Enter sends, Shift+Enter new line, / canned responses';
    this.send.textContent = mode === 'note' ? 'Add note' : 'Send reply';
    this.chips.el.hidden = mode === 'note';
    if (save) this.saveDraft();
  }

  private layout(): void {
    const picker = h('input', {
      type: 'file',
      multiple: true,
      hidden: true,
      'aria-label': 'Attach files',
      tabindex: -1,
    });
    picker.addEventListener('change', () => {
      this.files.add(picker.files ?? []);
      picker.value = '';
    });
    const attach = h(
      'button',
      { type: 'button', class: 'secondary small', onclick: () => picker.click() },
      'Attach files',
    );
    const previewToggle = h(
      'button',
      { type: 'button', class: 'secondary small', 'aria-pressed': 'false' },
      'Preview',
    );
    previewToggle.addEventListener('click', () => {
      const on = this.preview.hidden;
      this.preview.hidden = !on;
      previewToggle.setAttribute('aria-pressed', String(on));
      replaceChildren(
        this.preview,
        on ? renderMarkdown(document, this.box.value || '*Nothing to preview.*') : null,
      );
    });
    replaceChildren(
      this.el,
      // The portal is served by the server it talks to, which always takes notes (docs/design.md "Internal notes").
      h(
        'div',
        { class: 'composer-modes', role: 'group', 'aria-label': 'Write' },
        this.modeButtons.reply,
        this.modeButtons.note,
      ),
      this.box,
      attachCannedMenu(this.box),
      this.mentions.el,
      this.preview,
      this.files.el,
      h(
        'div',
        { class: 'composer-tools' },
        attach,
        picker,
        previewToggle,
        // Quick replies on the tools' row: a row of their own cost the transcript a line.
        this.chips.el,
        h('span', { class: 'spacer' }),
        this.send,
      ),
      this.feedback.el,
    );
    this.setMode('reply', false);
  }

  private wire(): void {
    this.box.addEventListener('input', () => this.saveDraft());
    // Enter sends, Shift+Enter breaks the line; an open `/` or `@` menu took its Enter already (defaultPrevented).
    this.box.addEventListener('keydown', (event) => {
      // Escape leaves the composer (the draft stays), so the inbox's single-key shortcuts work again.
      if (event.key === 'Escape' && !event.defaultPrevented) return this.box.blur();
      if (event.key !== 'Enter' || event.shiftKey || event.isComposing || event.defaultPrevented) return;
      event.preventDefault();
      this.el.requestSubmit();
    });
    this.el.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.submit();
    });
    this.el.addEventListener('dragover', (event) => {
      if (!event.dataTransfer?.types.includes('Files')) return;
      event.preventDefault();
      this.el.classList.add('dropping');
    });
    this.el.addEventListener('dragleave', () => this.el.classList.remove('dropping'));
    this.el.addEventListener('drop', (event) => {
      this.el.classList.remove('dropping');
      if (!event.dataTransfer?.files.length) return;
      event.preventDefault();
      this.files.add(event.dataTransfer.files);
    });
    this.box.addEventListener('paste', (event) => {
      const pasted = event.clipboardData?.files;
      if (!pasted?.length) return;
      event.preventDefault();
      this.files.add(pasted);
    });
  }

  private saveDraft(): void {
    this.o.drafts.set(this.o.conversationId, { text: this.box.value, mode: this.mode });
  }

  private async submit(): Promise<void> {
    const text = this.box.value.trim();
    const files = this.mode === 'note' ? [] : this.files.all;
    if (!text && files.length === 0) {
      this.feedback.say('error', 'This field is required.');
      return;
    }
    this.send.disabled = true;
    try {
      if (this.mode === 'note') await this.o.sendNote(text, mentionedIds(text, this.mentions.picked));
      else await this.o.sendReply({ content: text, files, quickReplies: this.chips.values });
      this.box.value = '';
      this.files.clear();
      this.chips.clear();
      this.mentions.picked.length = 0;
      this.o.drafts.clear(this.o.conversationId);
      replaceChildren(this.feedback.el);
      this.preview.hidden = true;
    } catch (err) {
      this.feedback.say('error', errorText(err));
    } finally {
      this.send.disabled = false;
    }
  }
}

/** An API problem with its field errors (e.g. a file too large), or a generic sentence. */
function errorText(err: unknown): string {
  if (err instanceof ApiError)
    return [err.detail, ...err.fieldErrors.map((f) => `${f.field}: ${f.message}`)].join(' ');
  return err instanceof Error ? err.message : 'Sending failed.';
}
