// Rotating a postback endpoint's signing secret (docs/postbacks.md#rotating-the-secret): the
// Postbacks page's "Rotate secret" asks first (and how long the old secret keeps signing), then
// shows the new secret once, as creation does, and until when the old one is still valid.
import { ApiError, post } from '../api';
import { button, field, h, notice, select } from '../dom';
import { dateTime } from '../format';
import { shownOnce } from '../secret';

/** What the API says of an endpoint's rotation. */
export interface Rotated {
  id: string;
  url: string;
  secret?: string;
  secret_rotated_at?: string | null;
  previous_secret_expires_at?: string | null;
}

/** How long the old secret keeps signing beside the new one: seconds, as the API takes them. */
export const OVERLAPS: [string, string][] = [
  ['86400', '24 hours (recommended)'],
  ['3600', '1 hour'],
  ['604800', '7 days'],
  ['0', 'End it now'],
];

/** The body of a rotation for an overlap chosen in OVERLAPS. */
export function rotationBody(seconds: string): { previous_valid_for_seconds: number } {
  return { previous_valid_for_seconds: Number(seconds) };
}

/** An endpoint's secret in a few words: whether the old one still signs, and until when. */
export function secretState(e: Rotated, tz?: string): string {
  if (e.previous_secret_expires_at) return `old secret valid until ${dateTime(e.previous_secret_expires_at, tz)}`;
  if (e.secret_rotated_at) return `rotated ${dateTime(e.secret_rotated_at, tz)}`;
  return 'never rotated';
}

/** What the answer to a rotation tells the user beside the new secret. */
export function afterRotation(e: Rotated, tz?: string): string {
  if (e.previous_secret_expires_at) return `The old secret still signs every postback, beside the new one, until ${dateTime(e.previous_secret_expires_at, tz)}: switch your receiver to the new secret before then.`;
  return 'The old secret no longer signs: postbacks are signed with the new secret alone.';
}

/**
 * Asks in `box` whether to rotate `e`'s secret, and for how long the old one stays valid; on
 * "Rotate secret", rotates it, shows the new secret once and calls `done` (to draw the list again).
 */
export function askRotation(box: HTMLElement, e: Rotated, done: () => Promise<void>): void {
  const overlap = field('previous_valid_for_seconds', 'Keep the old secret valid for', select(OVERLAPS, '86400'));
  const status = h('div');
  const title = h('h2', { tabindex: '-1' }, 'Rotate the signing secret?');
  const cancel = button('Cancel', () => box.replaceChildren(), { class: 'secondary' });
  const confirm = button('Rotate secret', async () => {
    confirm.disabled = true;
    try {
      const res = await post<{ data: Rotated }>(`/v1/postback-endpoints/${encodeURIComponent(e.id)}/rotate-secret`, rotationBody(overlap.control.value));
      const heading = h('h2', { tabindex: '-1' }, 'Secret rotated');
      box.replaceChildren(h('div', { class: 'card', id: 'postback-rotated' }, heading, h('p', { class: 'mono small' }, e.url), shownOnce('New signing secret', res.data.secret ?? ''), h('p', { id: 'postback-old-secret' }, afterRotation(res.data))));
      heading.focus();
      await done();
    } catch (err) {
      confirm.disabled = false;
      const hint = err instanceof ApiError && err.status === 409 && overlap.control.value !== '0' ? ' On this page: choose “End it now” to end every old secret at once.' : '';
      status.replaceChildren(notice(err instanceof ApiError ? err.message + hint : String(err), 'error'));
    }
  });
  box.replaceChildren(
    h(
      'div',
      { class: 'card', id: 'postback-rotate', role: 'group', 'aria-labelledby': 'postback-rotate-title' },
      Object.assign(title, { id: 'postback-rotate-title' }),
      h('p', { class: 'mono small' }, e.url),
      h('p', {}, 'A new secret is made and shown once. Postbacks are then signed with both secrets (two v1 values in Leadflow-Signature) until the old one ends, so your receiver keeps working while you switch it over.'),
      overlap.wrapper,
      status,
      h('div', { class: 'actions' }, confirm, cancel),
    ),
  );
  title.focus();
}
