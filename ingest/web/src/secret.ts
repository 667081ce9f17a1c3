// A secret shown once (an API key, a campaign key): the value, a copy button and the warning.
import { button, h } from './dom';

export function shownOnce(label: string, value: string): HTMLElement {
  const out = h('output', { class: 'secret mono', id: 'secret-value', 'aria-label': label }, value);
  const copied = h('span', { role: 'status', class: 'muted' });
  return h(
    'div',
    { class: 'notice notice-warn secret-box', role: 'alert' },
    h('p', {}, h('strong', {}, label), ': copy it now. It is shown only this once and cannot be read again; if it is lost, make a new one.'),
    out,
    ' ',
    button('Copy', async () => {
      try {
        await navigator.clipboard.writeText(value);
        copied.textContent = 'Copied.';
      } catch {
        copied.textContent = 'Select the text and copy it.';
      }
    }, { class: 'small' }),
    ' ',
    copied,
  );
}
