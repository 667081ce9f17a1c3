import { Page as ApiPage, ApiError, get, query } from '../api';
import { Ctx } from '../app';
import { Child, emptyState, field, h, input, link, select, table } from '../dom';
import { FormErrors } from '../form';
import { dateTime, rangeError } from '../format';
import { zone } from '../zone';
import { zoneNote } from './settings_menu';

/** One entry of GET /v1/audit (docs/api.md). */
export interface ChangeEntry {
  id: string;
  at: string;
  actor: { id: string | null; name: string; surface: string };
  action: string;
  object: { kind: string; id: string; name: string };
  changes: { field: string; before: unknown; after: unknown }[];
}

const KINDS: [string, string][] = [['', 'any'], ['buyer', 'Buyer'], ['campaign', 'Campaign'], ['seller', 'Seller'], ['api_key', 'API key'], ['user', 'User'], ['lead', 'Lead'], ['postback_endpoint', 'Postback endpoint'], ['suppression_list', 'Suppression list'], ['vertical', 'Vertical']];
const KIND_NAMES: Record<string, string> = Object.fromEntries(KINDS.filter(([k]) => k));
const FILTERS = ['object_kind', 'actor', 'from', 'to'];

/** A field's value as the log shows it: text as it is, absent as a dash, the rest as JSON. */
export function shownValue(v: unknown): string {
  if (v === null || v === undefined) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** GET /v1/audit's query for the page's address: its search, filters and cursor; From and To
 *  are whole days in the user's zone `tz`, sent with them (as the lead list's). */
export function auditQuery(s: URLSearchParams, tz: string): Record<string, string> {
  const params: Record<string, string> = { limit: s.get('limit') ?? '50', cursor: s.get('cursor') ?? '', q: s.get('q') ?? '' };
  for (const n of FILTERS) params[n] = s.get(n) ?? '';
  if (params.from || params.to) params.tz = tz;
  return params;
}

/** The change of an entry: one line per field, "field: before → after". */
export function changeLines(e: ChangeEntry): Child {
  if (!e.changes.length) return '—';
  return h(
    'ul',
    { class: 'change-fields' },
    e.changes.map((c) => h('li', {}, h('span', { class: 'mono' }, c.field), ': ', h('span', { class: 'before' }, shownValue(c.before)), ' → ', h('span', { class: 'after' }, shownValue(c.after)))),
  );
}

export async function changeLogPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const s = ctx.search;
  const find = field('q', 'Search', input({ type: 'search', value: s.get('q') ?? '', placeholder: 'Name or id of a record or of who changed it', autocomplete: 'off' }));
  const fields = [
    field('object_kind', 'Record', select(KINDS, s.get('object_kind') ?? '')),
    field('actor', 'Changed by (id)', input({ value: s.get('actor') ?? '', placeholder: 'us_… or key_…' })),
    field('from', 'From', input({ type: 'date', value: s.get('from') ?? '' })),
    field('to', 'To (included)', input({ type: 'date', value: s.get('to') ?? '' })),
  ];
  const errors = new FormErrors([find, ...fields]);
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Search the change log', novalidate: true },
    errors.element,
    find.wrapper,
    fields.map((f) => f.wrapper),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Search'), link('/change-log', 'Clear', { class: 'button secondary' })),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const params: Record<string, string> = { q: find.control.value };
    for (const f of fields) params[f.name] = f.control.value;
    const wrong = rangeError(params.from, params.to);
    if (wrong) return errors.show(new ApiError(400, wrong, [{ field: 'to', message: wrong }]));
    ctx.go(`/change-log${query(params)}`);
  });
  root.append(h('h1', {}, 'Change log'), h('p', { class: 'muted' }, 'Who changed which buyer, campaign, seller, API key or user, when, and from what to what, and who erased which lead\'s personal data. Secrets are never shown.'), form, zoneNote());

  const params = auditQuery(s, zone());
  let page: ApiPage<ChangeEntry>;
  try {
    page = await get<ApiPage<ChangeEntry>>(`/v1/audit${query(params)}`);
  } catch (e) {
    // A refused filter is said beside its field; anything else is the page's error to retry.
    if (e instanceof ApiError && e.fields.length) return errors.show(e);
    throw e;
  }
  const rows = page.data.map((e) => [
    h('time', { datetime: e.at }, dateTime(e.at)),
    h('div', {}, e.actor.name || e.actor.id || '—', h('div', { class: 'muted small' }, [e.actor.surface, e.actor.id].filter(Boolean).join(' · '))),
    h('div', {}, `${KIND_NAMES[e.object.kind] ?? e.object.kind} ${e.action.replace('_', ' ')}: `, h('strong', {}, e.object.name || e.object.id), h('div', { class: 'muted small mono' }, e.object.id)),
    changeLines(e),
  ]);
  const searched = s.get('q') || FILTERS.some((n) => s.get(n));
  if (!page.data.length)
    root.append(searched ? emptyState('No change matches this search. ', link('/change-log', 'Clear the search')) : emptyState('No change yet: every change of a buyer, campaign, seller, API key or user appears here.'));
  else root.append(table(['When', 'Who', 'What', 'Change'], rows, `${page.data.length} ${page.data.length === 1 ? 'change' : 'changes'}, newest first`, undefined, 'change-list'));
  const nav = h('div', { class: 'pager' });
  if (s.get('cursor')) {
    const back = new URLSearchParams(s);
    back.delete('cursor');
    nav.append(link(`/change-log?${back}`, 'First page', { class: 'button secondary' }));
  }
  if (page.has_more && page.next_cursor) {
    const next = new URLSearchParams(s);
    next.set('cursor', page.next_cursor);
    nav.append(link(`/change-log?${next}`, 'Next page', { class: 'button' }));
  }
  root.append(nav);
}
