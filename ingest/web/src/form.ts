// A form's fields and the errors the API names for them: each error is shown next to the field
// it concerns (the field whose name is the error's path or its nearest parent), the rest above
// the form.
import { ApiError, FieldError } from './api';
import { Field, clear, h, notice } from './dom';

/** The field an error's path belongs to: the exact name, else the longest name that is a
 *  parent of the path ("filters.custom[0].op" → "filters.custom"), else null. */
export function fieldForError(names: string[], path: string): string | null {
  if (names.includes(path)) return path;
  let best: string | null = null;
  for (const n of names) {
    if ((path.startsWith(n + '.') || path.startsWith(n + '[')) && (!best || n.length > best.length)) best = n;
  }
  return best;
}

/** Groups errors by the field they are shown at; those of no field under "". */
export function assignErrors(names: string[], errors: FieldError[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of errors) {
    const at = fieldForError(names, e.field) ?? '';
    const text = at === e.field || at === '' ? e.message : `${e.field.slice(at.length).replace(/^\./, '')}: ${e.message}`;
    out.set(at, [...(out.get(at) ?? []), at === '' && e.field ? `${e.field}: ${e.message}` : text]);
  }
  return out;
}

export class FormErrors {
  private readonly summary = h('div', { class: 'form-summary' });
  constructor(private readonly fields: Field[]) {}

  get element(): HTMLElement {
    return this.summary;
  }

  clear(): void {
    clear(this.summary);
    for (const f of this.fields) {
      f.error.textContent = '';
      f.control.removeAttribute('aria-invalid');
      f.wrapper.classList.remove('has-error');
    }
  }

  /** Shows an error from the API (or any other) where it belongs. */
  show(err: unknown): void {
    this.clear();
    if (!(err instanceof ApiError)) {
      this.summary.appendChild(notice(String(err instanceof Error ? err.message : err), 'error'));
      return;
    }
    const grouped = assignErrors(
      this.fields.map((f) => f.name),
      err.fields,
    );
    let first: Field | null = null;
    for (const f of this.fields) {
      const messages = grouped.get(f.name);
      if (!messages) continue;
      f.error.textContent = messages.join('; ');
      f.control.setAttribute('aria-invalid', 'true');
      f.wrapper.classList.add('has-error');
      first ??= f;
    }
    const rest = grouped.get('') ?? [];
    const text = rest.length ? `${err.message}: ${rest.join('; ')}` : err.message;
    this.summary.appendChild(notice(text, 'error'));
    first?.control.focus();
  }
}
