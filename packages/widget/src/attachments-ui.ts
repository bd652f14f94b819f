import { RASTER_IMAGE_TYPES } from '@parley/webchat-protocol';
import type { Attachment, AttachmentBlock, Block, UploadProgress } from '@parley/webchat-sdk';
import { builder, icon } from './dom.ts';
import { fill } from './language.ts';
import type { WidgetStrings } from './strings/en.ts';

/** Material Icons `attach_file`, drawn as an SVG path: no icon font needed. */
const PAPERCLIP =
  'M16.5 6v11.5c0 2.21-1.79 4-4 4s-4-1.79-4-4V5c0-1.38 1.12-2.5 2.5-2.5s2.5 1.12 2.5 2.5v10.5c0 .55-.45 1-1 1s-1-.45-1-1V6H10v9.5c0 1.38 1.12 2.5 2.5 2.5s2.5-1.12 2.5-2.5V5c0-2.21-1.79-4-4-4S7 2.79 7 5v12.5c0 3.04 2.46 5.5 5.5 5.5s5.5-2.46 5.5-5.5V6h-1.5z';

/** What a thumbnail or chip shows: an attachment block of a message, or an upload's answer still in the composer. */
type ShownFile = Pick<AttachmentBlock, 'url' | 'name' | 'content_type' | 'size'>;

type Upload = (file: File, onProgress: (progress: UploadProgress) => void) => Promise<Attachment>;

/** What the composer holds: the paperclip, the hidden file input and the tray of attachments for the next send. */
export interface AttachmentComposer {
  button: HTMLButtonElement;
  input: HTMLInputElement;
  tray: HTMLElement;
  /** Uploads files (chosen, pasted or dropped), each with its own progress bar; refusals show in the tray. */
  add(files: Iterable<File>): void;
  /** The attachments uploaded so far, taken for a send (the tray empties). */
  take(): Attachment[];
  /** True while an upload is still running (sending waits for it). */
  busy(): boolean;
}

/**
 * The composer's attachments (docs/design.md "Attachments"): a paperclip button and a file input, paste and
 * drag-and-drop handled by the widget through `add`, an upload progress bar per file (the SDK reports the bytes
 * sent), and the server's refusals in words (too large, type not allowed).
 */
export function attachmentComposer(
  doc: Document,
  strings: WidgetStrings,
  upload: Upload,
): AttachmentComposer {
  const el = builder(doc);
  const button = el('button', {
    type: 'button',
    class: 'attach',
    'aria-label': strings.attachFile,
    title: strings.attachFile,
  });
  button.append(icon(doc, PAPERCLIP));
  const input = el('input', { type: 'file', class: 'sr-only', tabindex: '-1', 'aria-hidden': 'true' });
  input.multiple = true;
  // Refusals announce themselves (role=alert); the widget's one polite live region stays for replies.
  const tray = el('div', { class: 'tray' });
  tray.hidden = true;
  const ready: Attachment[] = [];
  let running = 0;

  const refresh = () => {
    tray.hidden = tray.childElementCount === 0;
  };
  const add = (files: Iterable<File>) => {
    for (const file of files) {
      const item = el('div', { class: 'upload' });
      const name = el('span', { class: 'name' }, file.name || strings.pastedImage);
      const bar = el('progress', {
        max: '1',
        value: '0',
        'aria-label': fill(strings.uploading, { name: file.name || strings.pastedImage }),
      });
      item.append(name, bar);
      tray.append(item);
      refresh();
      running++;
      upload(file, ({ loaded, total }) => {
        bar.value = total > 0 ? loaded / total : 0;
      })
        .then((attachment) => {
          ready.push(attachment);
          item.replaceChildren(attachmentChip(doc, attachment), removeButton(attachment, item));
        })
        .catch((err: { problemCode?: string }) => {
          item.className = 'upload failed';
          item.replaceChildren(
            el(
              'span',
              { role: 'alert' },
              `${file.name || strings.pastedImage}: ${refusalText(strings, err.problemCode)}`,
            ),
            dismissButton(item),
          );
        })
        .finally(() => {
          running--;
        });
    }
  };
  const removeButton = (attachment: Attachment, item: HTMLElement) => {
    const remove = el(
      'button',
      {
        type: 'button',
        class: 'remove',
        'aria-label': fill(strings.removeAttachment, { name: attachment.name }),
      },
      '✕',
    );
    remove.addEventListener('click', () => {
      ready.splice(ready.indexOf(attachment), 1);
      item.remove();
      refresh();
    });
    return remove;
  };
  const dismissButton = (item: HTMLElement) => {
    const dismiss = el('button', { type: 'button', class: 'remove', 'aria-label': strings.dismiss }, '✕');
    dismiss.addEventListener('click', () => {
      item.remove();
      refresh();
    });
    return dismiss;
  };
  button.addEventListener('click', () => input.click());
  input.addEventListener('change', () => {
    if (input.files) add([...input.files]);
    input.value = '';
  });
  return {
    button,
    input,
    tray,
    add,
    take: () => {
      const taken = ready.splice(0);
      for (const item of [...tray.children]) if (!item.classList.contains('failed')) item.remove();
      refresh();
      return taken;
    },
    busy: () => running > 0,
  };
}

function refusalText(strings: WidgetStrings, problemCode: string | undefined): string {
  if (problemCode === 'attachment_too_large') return strings.attachmentTooLarge;
  if (problemCode === 'attachment_type_not_allowed') return strings.attachmentTypeNotAllowed;
  return strings.uploadFailed;
}

/** The attachment blocks of a message: thumbnails for raster images, chips (download links) for other files. */
export function renderAttachments(doc: Document, blocks: readonly Block[]): HTMLElement | undefined {
  const attachments = blocks.filter((b): b is AttachmentBlock => b.type === 'attachment');
  if (attachments.length === 0) return undefined;
  const list = builder(doc)('div', { class: 'attachments' });
  for (const a of attachments)
    list.append(RASTER_IMAGE_TYPES.has(a.content_type) ? thumbnail(doc, a) : attachmentChip(doc, a));
  return list;
}

function thumbnail(doc: Document, attachment: ShownFile): HTMLElement {
  const el = builder(doc);
  const link = el('a', {
    href: attachment.url,
    target: '_blank',
    rel: 'noopener noreferrer',
    class: 'thumb-link',
  });
  const img = el('img', { src: attachment.url, alt: attachment.name, class: 'thumbnail', loading: 'lazy' });
  link.append(img);
  return link;
}

function attachmentChip(doc: Document, attachment: ShownFile): HTMLElement {
  const el = builder(doc);
  const chip = el('a', {
    href: attachment.url,
    target: '_blank',
    rel: 'noopener noreferrer',
    class: 'chip',
    download: attachment.name,
  });
  chip.append(icon(doc, PAPERCLIP), el('span', {}, `${attachment.name} (${formatSize(attachment.size)})`));
  return chip;
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
