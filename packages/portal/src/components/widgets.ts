import { h } from '../dom.ts';

/** A button that copies `text`; says "Copied" to screen readers and sighted users alike. */
export function copyButton(text: string, label = 'Copy'): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'secondary copy', 'data-copy': text }, label);
  button.addEventListener('click', async () => {
    let ok = false;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch {
      // Clipboard API refused (insecure context, permissions): fall back to a selection copy.
      const area = h('textarea', { class: 'visually-hidden', readonly: true });
      area.value = text;
      document.body.append(area);
      area.select();
      ok = document.execCommand('copy');
      area.remove();
    }
    button.textContent = ok ? 'Copied' : 'Copy failed — select the text';
    setTimeout(() => {
      button.textContent = label;
    }, 2000);
  });
  return button;
}

/** An id (or other value) shown in code font with a copy button next to it. */
export function copyable(value: string, label = 'Copy'): HTMLElement {
  return h('span', { class: 'copyable' }, h('code', {}, value), copyButton(value, label));
}

/** A modal confirmation (native <dialog>: focus trapped, Escape cancels). */
export function confirmDialog(title: string, message: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const cancel = h('button', { type: 'button', class: 'secondary', value: 'cancel' }, 'Cancel');
    const confirm = h('button', { type: 'button', class: 'danger', value: 'confirm' }, confirmLabel);
    const titleId = `dialog-title-${Date.now()}`;
    const dialog = h(
      'dialog',
      { 'aria-labelledby': titleId },
      h('h2', { id: titleId }, title),
      h('p', {}, message),
      h('div', { class: 'actions' }, cancel, confirm),
    );
    const done = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    cancel.addEventListener('click', () => done(false));
    confirm.addEventListener('click', () => done(true));
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      done(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

export function notice(kind: 'success' | 'error' | 'info', ...children: Array<Node | string>): HTMLElement {
  return h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, ...children);
}

/**
 * A form in a modal dialog (e.g. "rotate key"). `build(close)` returns the form; it calls `close()` after a
 * successful submit. Escape or Cancel closes without submitting.
 */
export function formDialog(
  title: string,
  intro: string,
  build: (close: () => void) => HTMLFormElement,
): void {
  const titleId = `dialog-title-${Date.now()}`;
  const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
  const dialog = h(
    'dialog',
    { 'aria-labelledby': titleId },
    h('h2', { id: titleId }, title),
    h('p', {}, intro),
  );
  const close = () => {
    dialog.close();
    dialog.remove();
  };
  const form = build(close);
  form.querySelector('.actions')?.append(cancel);
  dialog.append(form);
  cancel.addEventListener('click', close);
  dialog.addEventListener('cancel', (e) => {
    e.preventDefault();
    close();
  });
  document.body.append(dialog);
  dialog.showModal();
  (form.querySelector('input, select, textarea') as HTMLElement | null)?.focus();
}
