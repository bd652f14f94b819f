import { ApiError } from '../api.ts';
import { h, uid } from '../dom.ts';

export interface FieldSpec {
  name: string;
  label: string;
  type?: 'text' | 'password' | 'email' | 'url' | 'textarea' | 'select' | 'checkboxes' | 'checkbox';
  required?: boolean;
  hint?: string;
  value?: string;
  values?: string[];
  options?: Array<{ value: string; label: string }>;
  autocomplete?: string;
  maxLength?: number;
  placeholder?: string;
  /** Client-side check beyond `required`; returns a message when the value is wrong. */
  validate?: (value: string | string[]) => string | undefined;
}

export type FormValues = Record<string, string | string[]>;

export interface FormOptions {
  fields: FieldSpec[];
  submitLabel: string;
  onSubmit(values: FormValues): Promise<void>;
  /** Server error codes that belong to one field (services that answer a code without `errors[]`). */
  codeFields?: Record<string, string>;
  /** Clear the inputs after a successful submit. */
  resetOnSuccess?: boolean;
}

export interface FieldHandle {
  spec: FieldSpec;
  wrapper: HTMLElement;
  error: HTMLElement;
  focusTarget: HTMLElement;
  read(): string | string[];
}

/**
 * A labelled form: required and custom checks run in the browser first, then the server's problem answer is shown
 * next to the field it names (`errors[].field`, or a code mapped to a field) or above the button.
 */
export function createForm(options: FormOptions): { el: HTMLFormElement; fields: Map<string, FieldHandle> } {
  const fields = new Map<string, FieldHandle>();
  const formError = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const submit = h('button', { type: 'submit', class: 'primary' }, options.submitLabel);
  const form = h('form', { novalidate: true, class: 'stack' });
  for (const spec of options.fields) {
    const handle = renderField(spec);
    fields.set(spec.name, handle);
    form.append(handle.wrapper);
  }
  form.append(formError, h('div', { class: 'actions' }, submit));

  const clearErrors = () => {
    formError.hidden = true;
    formError.textContent = '';
    for (const f of fields.values()) setFieldError(f, undefined);
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors();
    const values: FormValues = {};
    let firstInvalid: FieldHandle | undefined;
    for (const f of fields.values()) {
      const value = f.read();
      values[f.spec.name] = value;
      const empty = Array.isArray(value) ? value.length === 0 : value.trim() === '';
      const message =
        f.spec.required && empty
          ? f.spec.type === 'checkboxes'
            ? 'Choose at least one.'
            : 'This field is required.'
          : f.spec.validate?.(value);
      if (message) {
        setFieldError(f, message);
        firstInvalid ??= f;
      }
    }
    if (firstInvalid) {
      firstInvalid.focusTarget.focus();
      return;
    }
    submit.disabled = true;
    form.setAttribute('aria-busy', 'true');
    try {
      await options.onSubmit(values);
      if (options.resetOnSuccess) form.reset();
    } catch (err) {
      showServerError(err, fields, formError, options.codeFields ?? {});
    } finally {
      submit.disabled = false;
      form.removeAttribute('aria-busy');
    }
  });
  return { el: form, fields };
}

function showServerError(
  err: unknown,
  fields: Map<string, FieldHandle>,
  formError: HTMLElement,
  codeFields: Record<string, string>,
) {
  if (!(err instanceof ApiError)) {
    formError.textContent = 'The portal could not reach the server. Check the connection and try again.';
    formError.hidden = false;
    return;
  }
  let placed: FieldHandle | undefined;
  for (const fe of err.fieldErrors) {
    const f = fields.get(fe.field.split('.')[0]!);
    if (f) {
      setFieldError(f, `${f.spec.label} ${fe.message}.`);
      placed ??= f;
    }
  }
  const byCode = codeFields[err.code] ? fields.get(codeFields[err.code]!) : undefined;
  if (!placed && byCode) {
    setFieldError(byCode, err.detail);
    placed = byCode;
  }
  if (placed) {
    placed.focusTarget.focus();
    return;
  }
  formError.textContent =
    err.status === 429 && err.retryAfter ? `${err.detail} (about ${err.retryAfter} s)` : err.detail;
  formError.hidden = false;
}

function setFieldError(f: FieldHandle, message: string | undefined) {
  f.error.textContent = message ?? '';
  f.error.hidden = !message;
  f.wrapper.classList.toggle('invalid', Boolean(message));
  for (const input of f.wrapper.querySelectorAll('input, select, textarea')) {
    if (message) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }
}

function renderField(spec: FieldSpec): FieldHandle {
  const id = uid(spec.name);
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const describedBy = [spec.hint ? hintId : '', errorId].filter(Boolean).join(' ');
  const error = h('p', { class: 'field-error', id: errorId, hidden: true });
  const hint = spec.hint ? h('p', { class: 'hint', id: hintId }, spec.hint) : null;

  if (spec.type === 'checkboxes') {
    const boxes = (spec.options ?? []).map((o) =>
      h('input', {
        type: 'checkbox',
        name: spec.name,
        value: o.value,
        id: uid(`${spec.name}-${o.value}`),
        checked: spec.values?.includes(o.value),
      }),
    );
    const wrapper = h(
      'fieldset',
      { class: 'field', 'aria-describedby': describedBy },
      h(
        'legend',
        {},
        spec.label,
        spec.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null,
      ),
      hint,
      h(
        'div',
        { class: 'checks' },
        ...boxes.map((b, i) => h('label', { class: 'check', for: b.id }, b, ` ${spec.options![i]!.label}`)),
      ),
      error,
    );
    return {
      spec,
      wrapper,
      error,
      focusTarget: boxes[0] ?? wrapper,
      read: () => boxes.filter((b) => b.checked).map((b) => b.value),
    };
  }

  if (spec.type === 'checkbox') {
    const box = h('input', {
      type: 'checkbox',
      name: spec.name,
      id,
      checked: spec.value === 'true',
      'aria-describedby': describedBy,
    });
    const wrapper = h(
      'div',
      { class: 'field' },
      h('label', { class: 'check', for: id }, box, ` ${spec.label}`),
      hint,
      error,
    );
    return { spec, wrapper, error, focusTarget: box, read: () => (box.checked ? 'true' : 'false') };
  }

  const common = {
    id,
    name: spec.name,
    required: spec.required,
    'aria-describedby': describedBy,
    maxlength: spec.maxLength,
    placeholder: spec.placeholder,
    autocomplete: spec.autocomplete,
  };
  let control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  if (spec.type === 'select') {
    control = h(
      'select',
      common,
      ...(spec.options ?? []).map((o) =>
        h('option', { value: o.value, selected: o.value === spec.value }, o.label),
      ),
    );
  } else if (spec.type === 'textarea') {
    control = h('textarea', { ...common, rows: 4 });
    control.value = spec.value ?? '';
  } else {
    control = h('input', { ...common, type: spec.type ?? 'text' });
    control.value = spec.value ?? '';
  }
  const wrapper = h(
    'div',
    { class: 'field' },
    h(
      'label',
      { for: id },
      spec.label,
      spec.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, ' *') : null,
    ),
    hint,
    control,
    error,
  );
  return { spec, wrapper, error, focusTarget: control, read: () => control.value };
}

/** Splits a whitespace- or comma-separated list typed into one field. */
export const splitList = (value: string | string[]): string[] =>
  (Array.isArray(value) ? value : value.split(/[\s,]+/)).map((v) => v.trim()).filter(Boolean);
