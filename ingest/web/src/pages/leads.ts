import { Page as ApiPage, ApiError, get, query } from '../api';
import { Ctx, isOperator } from '../app';
import { Child, emptyState, field, h, input, link, named, select, table } from '../dom';
import { FormErrors } from '../form';
import { counted, rangeError } from '../format';
import { zone } from '../zone';
import { zoneNote } from './settings_menu';
import { Lead, attemptsTable, distributionPairs, leadCells, leadColumns, offerPairs, personLine, personPairs, returnsTable, searchPath } from '../lead_view';
import { Names, loadNames } from '../names';
import { unsoldHint, unsoldWhy } from '../unsold';
import { csvHref, leadsTitle } from '../buyer_portal';
import { returnCard } from './lead_return';
import { eraseCard, erasedNote } from './lead_erase';
import { TEST_FILTER, isTestStatus, testBadge } from '../test_mode';
const STATUSES = ['', 'pending', 'delivered', 'unsold', 'duplicate', 'rejected', 'failed', 'returned', 'test'];

function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge badge-${status}` }, status);
}

/** The status, and "Test" for a test lead (its status `test` said once, by the Test badge). */
function statusBadges(l: Lead): HTMLElement {
  return h('span', { class: 'badges' }, isTestStatus(l) ? null : statusBadge(l.status), testBadge(l.test));
}

/** A cell that is the id of a record this reader may name: its name, the id on hover and copy. */
export function withName(cell: Child, names: Names): Child {
  return typeof cell === 'string' && names.has(cell) ? named(names.get(cell), cell) : cell;
}

export async function leadsPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const s = ctx.search;
  // Filters on another party are the operator's only: the API refuses them to sellers and buyers.
  const op = isOperator(ctx.user);
  const account = ctx.user.account;
  const names = ['status', 'test', 'vertical', 'source', ...(op ? ['buyer_id', 'seller_id'] : []), 'created_from', 'created_to'];
  const fields = [
    field('status', 'Status', select(STATUSES.map((v) => [v, v || 'any'] as [string, string]), s.get('status') ?? '')),
    field('test', 'Test leads', select(TEST_FILTER, s.get('test') ?? '')),
    field('vertical', 'Vertical', input({ value: s.get('vertical') ?? '' })),
    field('source', 'Source', input({ value: s.get('source') ?? '' })),
    ...(op ? [field('buyer_id', 'Buyer id', input({ value: s.get('buyer_id') ?? '' })), field('seller_id', 'Seller id', input({ value: s.get('seller_id') ?? '' }))] : []),
    // Whole days in the user's zone, both included (the API's `tz`).
    field('created_from', 'From', input({ type: 'date', value: s.get('created_from') ?? '' })),
    field('created_to', 'To (included)', input({ type: 'date', value: s.get('created_to') ?? '' })),
  ];
  // One box finds a lead by id, e-mail or phone, within the filters chosen below.
  const find = field('q', 'Find a lead', input({ type: 'search', value: s.get('q') ?? '', placeholder: 'Lead id, e-mail or phone', autocomplete: 'off' }));
  const findErrors = new FormErrors([find]);
  const search = h('form', { class: 'search', role: 'search', 'aria-label': 'Find a lead', novalidate: true }, findErrors.element, find.wrapper, h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Find')));
  search.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ctx.go(searchPath(s, find.control.value));
  });
  const errors = new FormErrors(fields);
  const form = h('form', { class: 'filters', 'aria-label': 'Filter leads', novalidate: true }, errors.element, fields.map((f) => f.wrapper), h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Filter'), link('/leads', 'Clear', { class: 'button secondary' })));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const params: Record<string, string> = {};
    for (const f of fields) params[f.name] = f.control.value;
    params.q = s.get('q') ?? '';
    const wrong = rangeError(params.created_from, params.created_to);
    if (wrong) return errors.show(new ApiError(400, wrong, [{ field: 'created_to', message: wrong }]));
    ctx.go(`/leads${query(params)}`);
  });
  // The export: every party's own leads under these filters, in the columns it may see.
  const download = h('p', { class: 'download' }, h('a', { href: csvHref(s, zone()), download: '', id: 'download-csv', class: 'button secondary' }, 'Download CSV'), ' ', h('span', { class: 'muted small' }, 'the leads these filters find, newest first, up to 10,000 a file'));
  root.append(h('h1', {}, leadsTitle(account)), search, form, download, zoneNote());

  const params: Record<string, string> = { limit: s.get('limit') ?? '25', cursor: s.get('cursor') ?? '', q: s.get('q') ?? '' };
  for (const n of names) params[n] = s.get(n) ?? '';
  if (params.created_from || params.created_to) params.tz = zone();
  let loaded: [ApiPage<Lead>, Names];
  try {
    loaded = await Promise.all([get<ApiPage<Lead>>(`/v1/leads${query(params)}`), loadNames(account)]);
  } catch (e) {
    // A text that is no lead id, e-mail or phone: said under the box, and nothing is listed.
    if (e instanceof ApiError && e.fields.some((f) => f.field === 'q')) return findErrors.show(e);
    throw e;
  }
  const [page, known] = loaded;
  const rows = page.data.map((l) => {
    const cells: Child[] = leadCells(l, account).map((c) => withName(c, known));
    // A seller reads why its lead was not sold, in its own words, under the status.
    const hint = account === 'seller' ? unsoldHint(l) : null;
    cells[1] = hint ? h('div', {}, statusBadges(l), h('div', { class: 'muted small unsold-hint' }, hint)) : statusBadges(l);
    const person = personLine(l);
    const open = link(`/leads/${encodeURIComponent(l.lead_id)}`, person.name || l.lead_id, { title: l.lead_id, class: person.name ? 'lead-link' : 'lead-link mono' });
    return [h('div', {}, open, person.contact ? h('div', { class: 'muted small' }, person.contact) : null), ...cells];
  });
  const filtered = names.some((n) => s.get(n));
  const q = s.get('q');
  const empty = q
    ? ['No lead matches ', h('strong', {}, q), filtered ? ' with these filters' : '', ' (an id, e-mail or phone is matched whole). ', link('/leads', 'Clear the search')]
    : filtered
    ? ['No lead matches these filters. ', link('/leads', 'Clear the filters')]
    : account === 'seller'
      ? ['No leads yet — ', link('/settings/api-keys', 'make an API key'), ' and post your first lead, or ', link('/get-started', 'get started step by step', { id: 'get-started' }), '.']
      : account === 'buyer'
        ? ['No purchases yet: leads you buy appear here.']
        : ['No leads yet: they appear here as sellers post them. A seller needs an ', link('/settings/api-keys', 'API key'), ' first.'];
  if (!page.data.length) root.append(emptyState(...empty));
  else root.append(table(['Lead', ...leadColumns(account)], rows, `${page.data.length} ${page.data.length === 1 ? 'lead' : 'leads'}, newest first`, undefined, 'lead-list'));
  const nav = h('div', { class: 'pager' });
  if (s.get('cursor')) {
    const back = new URLSearchParams(s);
    back.delete('cursor');
    nav.append(link(`/leads?${back}`, 'First page', { class: 'button secondary' }));
  }
  if (page.has_more && page.next_cursor) {
    const next = new URLSearchParams(s);
    next.set('cursor', page.next_cursor);
    nav.append(link(`/leads?${next}`, 'Next page', { class: 'button' }));
  }
  root.append(nav);
}

function dl(pairs: [string, unknown][], names: Names): HTMLElement {
  return h('dl', { class: 'props' }, pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v === null || v === undefined || v === '' ? '—' : withName(String(v), names))]));
}

export async function leadPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const id = ctx.params.id;
  const account = ctx.user.account;
  const [{ data: l }, known] = await Promise.all([get<{ data: Lead }>(`/v1/leads/${encodeURIComponent(id)}`), loadNames(account)]);
  // A seller's lead not sold: why, in the seller words the API gives (src/unsold.ts).
  const why = account === 'seller' ? unsoldWhy(l) : null;
  const whyCard = why
    ? h(
        'section',
        { class: 'card', id: 'unsold-why' },
        h('h2', {}, 'Why it was not sold'),
        h('p', { class: 'why-headline' }, why.headline),
        why.details.length ? [h('h3', {}, 'What kept buyers from it'), h('ul', {}, why.details.map((r) => h('li', {}, r)))] : null,
      )
    : null;
  const erased = erasedNote(l.erased_at);
  root.append(
    h('p', {}, link('/leads', `← ${leadsTitle(account)}`)),
    h('h1', {}, 'Lead ', h('span', { class: 'mono' }, l.lead_id), ' ', statusBadges(l)),
    zoneNote(),
    ...(erased ? [erased] : []),
    ...(whyCard ? [whyCard] : []),
    h(
      'div',
      { class: 'grid2' },
      h('section', { class: 'card' }, h('h2', {}, 'Person'), dl(personPairs(l), known)),
      h('section', { class: 'card' }, h('h2', {}, 'Distribution'), dl(distributionPairs(l, account), known)),
    ),
  );
  const attempts = attemptsTable(l);
  if (attempts) root.append(h('h2', {}, 'Timeline'), table(attempts.head, attempts.rows.map((r) => r.map((c) => withName(c, known))), `${counted(attempts.rows.length, 'attempt')} (pings and posts)`, l.test ? 'A test lead is offered to no buyer: no ping or post.' : 'No ping or post yet.'));
  const offers = offerPairs(l);
  if (offers) root.append(h('h2', {}, 'Offered to buyers'), dl(offers, known));
  const ineligible: Lead[] = l.ineligible_buyers ?? [];
  if (ineligible.length || (l.status === 'unsold' && Array.isArray(l.ineligible_buyers))) {
    root.append(h('h2', {}, 'Buyers not eligible'), table(['Buyer', 'Why'], ineligible.map((i) => [withName(i.buyer_id, known), i.reason]), 'Why each buyer did not take part', 'Every buyer was eligible.'));
  }
  if (!why && Array.isArray(l.ineligible_reasons) && l.ineligible_reasons.length)
    root.append(h('h2', {}, 'Why buyers did not take part'), h('ul', {}, l.ineligible_reasons.map((r: string) => h('li', {}, r))));
  const returns = returnsTable(l, account);
  if (returns) root.append(h('h2', {}, 'Returns'), table(returns.head, returns.rows, counted(returns.rows.length, 'return')));
  // A buyer's purchase: returning it from here, or why it cannot be.
  if (l.return_window) root.append(returnCard(ctx, l.lead_id, l.return_window));
  // The operator erases a person's data on their request (docs/erasure.md).
  if (isOperator(ctx.user) && !l.erased_at) root.append(eraseCard(ctx, l.lead_id, l.status));
}
