import type { Attachment, UploadProgress } from '@parley/webchat-sdk';
import { type AttachmentComposer, attachmentComposer } from './attachments-ui.ts';
import { builder } from './dom.ts';
import type { WidgetStrings } from './strings/en.ts';

/** What the composer asks of the chat. */
export interface ComposerActions {
  /** Enter or the send button: the chat takes what the composer holds when it can send (see {@link Composer.take}). */
  submit(): void;
  upload(file: File, onProgress: (progress: UploadProgress) => void): Promise<Attachment>;
  /** The visitor typed into a non-empty composer (the agents see "Visitor is typing…"). */
  typing(): void;
}

/**
 * The composer: a labelled textarea (Enter sends, Shift+Enter adds a line), the paperclip with its tray of uploads,
 * and the send button. Files go up as soon as they are chosen, pasted or dropped; the next send carries them.
 */
export class Composer {
  readonly form: HTMLFormElement;
  readonly input: HTMLTextAreaElement;
  readonly tray: HTMLElement;
  private readonly attachments: AttachmentComposer;

  /** `dir`: the widget's direction, which the empty composer (its placeholder) takes. */
  constructor(
    doc: Document,
    strings: WidgetStrings,
    private readonly dir: 'ltr' | 'rtl',
    actions: ComposerActions,
  ) {
    const el = builder(doc);
    this.form = el('form', { class: 'composer' });
    const inputId = 'parley-input';
    const label = el('label', { class: 'sr-only', for: inputId }, strings.inputLabel);
    this.input = el('textarea', {
      id: inputId,
      rows: '1',
      placeholder: strings.inputPlaceholder,
      dir,
    });
    const send = el('button', { type: 'submit', class: 'send' }, strings.send);
    this.attachments = attachmentComposer(doc, strings, actions.upload);
    this.tray = this.attachments.tray;
    this.form.append(label, this.attachments.button, this.attachments.input, this.input, send);

    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.form.requestSubmit();
      }
    });
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      actions.submit();
    });
    this.input.addEventListener('input', () => {
      // What the visitor writes takes its own direction (English in an Arabic widget); empty, the widget's.
      this.input.dir = this.input.value ? 'auto' : dir;
      if (this.input.value.trim()) actions.typing();
    });
    this.input.addEventListener('paste', (event) => {
      const files = [...(event.clipboardData?.files ?? [])];
      if (files.length === 0) return;
      event.preventDefault();
      this.attachments.add(files);
    });
  }

  /** Files dropped on the panel. */
  addFiles(files: File[]): void {
    this.attachments.add(files);
  }

  /** True while an upload is still running (a send waits for it). */
  busy(): boolean {
    return this.attachments.busy();
  }

  /** Empties the composer and hands over what it held, or nothing when there is nothing to send. */
  take(): { text: string; attachments: Attachment[] } | null {
    const text = this.input.value.trim();
    const attachments = this.attachments.take();
    if (!text && attachments.length === 0) return null;
    this.input.value = '';
    this.input.dir = this.dir;
    return { text, attachments };
  }

  /** Shown and usable while the conversation is open; hidden once it is closed. */
  setEnabled(enabled: boolean): void {
    this.form.hidden = !enabled;
    this.input.disabled = !enabled;
  }

  focus(): void {
    this.input.focus();
  }
}
