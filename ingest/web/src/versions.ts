// Versions of the records the dashboard edits (docs/versions.md). Every edit of a buyer,
// campaign, user or API key is sent with If-Match: the version the page read. When someone else
// changed the record in between, the API refuses with 412 and changes nothing; the page then says
// so plainly and offers to reload the record, never sending the change again over theirs.
import { ApiError } from './api';
import { button, h } from './dom';

/** Whether an API error says someone else changed the record since it was read. */
export function isStale(e: unknown): e is ApiError {
  return e instanceof ApiError && e.status === 412;
}

/** What the dashboard tells the user when its edit of a `what` ("buyer") was refused as stale. */
export function staleText(what: string): string {
  return `Someone else changed this ${what} after you opened it, so your change was not saved. Reload it to see what they changed, then make your change again.`;
}

/** The notice of a stale edit, with a button that reloads the record (`reload`). */
export function staleNotice(what: string, reload: () => void): HTMLElement {
  return h('div', { class: 'notice notice-error', role: 'alert' }, staleText(what), ' ', button(`Reload the ${what}`, reload, { class: 'secondary small' }));
}
