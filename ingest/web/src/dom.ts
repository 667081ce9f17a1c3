// A tiny DOM toolkit: elements from tag, attributes and children; labelled form fields with a
// place for their error; tables; notices. No inline style or script anywhere (the dashboard's
// Content-Security-Policy forbids them): look comes from style.css classes.

export type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | ((ev: Event) => void) | undefined | null>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') {
      el.addEventListener(name.replace(/^on/, ''), value);
    } else if (name === 'class') {
      el.className = String(value);
    } else if (name === 'value' && 'value' in el) {
      // The default too, so a form's reset() goes back to it rather than to empty.
      if ('defaultValue' in el) (el as HTMLInputElement).defaultValue = String(value);
      (el as HTMLInputElement).value = String(value);
    } else if (name === 'checked' && 'checked' in el) {
      // As for a value: reset() restores defaultChecked, which the property alone leaves false.
      (el as HTMLInputElement).defaultChecked = Boolean(value);
      (el as HTMLInputElement).checked = Boolean(value);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: (Child | Child[])[]): void {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

let ids = 0;
export function uid(prefix: string): string {
  ids += 1;
  return `${prefix}-${ids}`;
}

/** A link the router follows without reloading the page. */
export function link(href: string, text: Child, attrs: Attrs = {}): HTMLAnchorElement {
  return h('a', { href, 'data-link': '1', ...attrs }, text);
}

export type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** One labelled field: the control, its label, a hint, and the place its error is shown. */
export interface Field {
  name: string;
  control: Control;
  wrapper: HTMLElement;
  error: HTMLElement;
}

export function field(name: string, label: string, control: Control, hint?: string): Field {
  const id = control.id || uid(`f-${name.replace(/[^a-z0-9]/gi, '-')}`);
  control.id = id;
  control.name = name;
  const error = h('p', { class: 'field-error', id: `${id}-error`, 'aria-live': 'polite' });
  const describedBy = [`${id}-error`];
  let hintEl: HTMLElement | null = null;
  if (hint) {
    hintEl = h('p', { class: 'hint', id: `${id}-hint` }, hint);
    describedBy.push(`${id}-hint`);
  }
  control.setAttribute('aria-describedby', describedBy.join(' '));
  const wrapper = h('div', { class: 'field', 'data-field': name }, h('label', { for: id }, label), control, hintEl, error);
  return { name, control, wrapper, error };
}

export function input(attrs: Attrs = {}): HTMLInputElement {
  return h('input', { type: 'text', ...attrs });
}

export function select(options: (string | [string, string])[], value = '', attrs: Attrs = {}): HTMLSelectElement {
  const s = h('select', attrs);
  for (const o of options) {
    const [v, text] = Array.isArray(o) ? o : [o, o];
    s.appendChild(h('option', { value: v }, text));
  }
  // A value that is none of the options leaves the first one chosen.
  if (Array.from(s.options).some((o) => o.value === value)) s.value = value;
  return s;
}

export function textarea(value = '', attrs: Attrs = {}): HTMLTextAreaElement {
  const t = h('textarea', { rows: 3, ...attrs });
  t.value = value;
  return t;
}

/** A table: header cells, then rows of cells; `empty` says what to do when there is no row; `cls`
 *  adds a class of the page's own. On a phone every table becomes cards (style.css, phone-cards),
 *  a row a card and each cell named by its column, so no column is hidden past the screen's edge. */
export function table(headers: string[], rows: Child[][], caption?: string, empty: Child | Child[] = 'Nothing to show.', cls?: string): HTMLElement {
  return h(
    'div',
    // Focusable, so a table wider than the screen can be scrolled from the keyboard.
    { class: cls ? `table-wrap phone-cards ${cls}` : 'table-wrap phone-cards', tabindex: 0, role: 'region', 'aria-label': caption ?? headers.join(', ') },
    h(
      'table',
      {},
      caption ? h('caption', {}, caption) : null,
      h('thead', {}, h('tr', {}, headers.map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, rows.length ? rows.map((r) => h('tr', {}, r.map((c, i) => h('td', { 'data-label': headers[i] }, c)))) : h('tr', {}, h('td', { colspan: headers.length, class: 'empty' }, empty))),
    ),
  );
}

export function notice(text: string, kind: 'error' | 'ok' | 'info' = 'info'): HTMLElement {
  return h('div', { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

export function button(text: string, onclick: (ev: Event) => void, attrs: Attrs = {}): HTMLButtonElement {
  return h('button', { type: 'button', ...attrs, onclick }, text);
}

/** An empty state: what is missing and what to do about it (a sentence, a link). */
export function emptyState(...children: Child[]): HTMLElement {
  return h('div', { class: 'empty-state', role: 'status' }, children);
}

/** A name for a record, its id on hover and a button that copies the id. */
export function named(name: string | null | undefined, id: string): HTMLElement {
  const copy = button('Copy id', () => void navigator.clipboard?.writeText(id).then(() => (copy.textContent = 'Copied'), () => {}), { class: 'copy', title: `Copy ${id}`, 'aria-label': `Copy id ${id}` });
  return h('span', { class: 'named' }, h('span', { title: id, class: name ? '' : 'mono' }, name || id), ' ', copy);
}
