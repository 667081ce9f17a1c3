// The ledger's journal for the operator (docs/dashboard.md, "Ledger"): every movement of money,
// oldest first as the API gives it, filtered by days, buyer, seller and kind (kept in the
// address), accounts by name, each entry's lead a link; a page at a time and the same filters
// as a CSV download.
import { Page as ApiPage, ApiError, get } from '../api';
import { Ctx } from '../app';
import { emptyState, field, h, input, link, select, table } from '../dom';
import { FormErrors } from '../form';
import { dateTime, money, rangeError } from '../format';
import { LEDGER_KINDS, LedgerEntry, entryKind, filtered, ledgerPagePath, ledgerPath } from '../ledger';
import { loadNames } from '../names';
import { zone } from '../zone';
import { zoneNote } from './settings_menu';

export async function ledgerPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const s = ctx.search;
  const names = await loadNames('operator');
  const accounts = (prefix: string, none: string): [string, string][] => [
    ['', none],
    ...[...names.entries()].filter(([id]) => id.startsWith(prefix)).sort((a, b) => a[1].localeCompare(b[1])),
  ];
  // A filter naming an account the lists do not hold keeps its id as its choice.
  const choice = (list: [string, string][], v: string) => (v && !list.some(([id]) => id === v) ? [...list, [v, v] as [string, string]] : list);
  const buyers = choice(accounts('by_', 'any buyer'), s.get('buyer_id') ?? '');
  const sellers = choice(accounts('sl_', 'any seller'), s.get('seller_id') ?? '');
  const fields = [
    field('from', 'From', input({ type: 'date', value: s.get('from') ?? '' })),
    field('to', 'To (included)', input({ type: 'date', value: s.get('to') ?? '' })),
    field('buyer_id', 'Buyer', select(buyers, s.get('buyer_id') ?? '')),
    field('seller_id', 'Seller', select(sellers, s.get('seller_id') ?? '')),
    field('kind', 'Kind', select(LEDGER_KINDS, s.get('kind') ?? '')),
  ];
  const errors = new FormErrors(fields);
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter the ledger', novalidate: true },
    errors.element,
    fields.map((f) => f.wrapper),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Show'), link('/ledger', 'Clear', { class: 'button secondary' })),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const params: Record<string, string> = {};
    for (const f of fields) params[f.name] = f.control.value;
    const wrong = rangeError(params.from, params.to);
    if (wrong) return errors.show(new ApiError(400, wrong, [{ field: 'to', message: wrong }]));
    ctx.go(ledgerPagePath(params));
  });
  root.append(
    h('h1', {}, 'Ledger'),
    h('p', { class: 'muted' }, 'Every movement of money, oldest first: each sale (settled ones included) and each return, what the buyer pays, what the seller is paid, and the margin. For reconciling with the books.'),
    form,
    zoneNote(),
  );

  let page: ApiPage<LedgerEntry>;
  try {
    page = await get<ApiPage<LedgerEntry>>(ledgerPath(s, zone()));
  } catch (e) {
    // A refused filter is said beside its field; anything else is the page's error to retry.
    if (e instanceof ApiError && e.fields.length) return errors.show(e);
    throw e;
  }
  const account = (id: string) => (id ? h('span', { title: id, class: names.get(id) ? '' : 'mono' }, names.get(id) || id) : '—');
  const rows = page.data.map((e) => [
    h('time', { datetime: e.at }, dateTime(e.at)),
    entryKind(e),
    link(`/leads/${encodeURIComponent(e.lead_id)}`, e.lead_id, { class: 'mono' }),
    account(e.buyer_id),
    account(e.seller_id),
    account(e.campaign_id),
    money(e.revenue, e.currency),
    money(e.payout, e.currency),
    money(e.margin, e.currency),
  ]);
  const csv = ledgerPath(s, zone(), true);
  root.append(h('p', { class: 'actions' }, h('a', { href: csv, download: '', class: 'button secondary', id: 'ledger-csv' }, 'Download CSV')));
  if (!page.data.length)
    root.append(filtered(s) ? emptyState('No entry matches these filters. ', link('/ledger', 'Clear the filters')) : emptyState('No entry yet: each sale and each return is written here.'));
  else root.append(table(['When', 'Kind', 'Lead', 'Buyer', 'Seller', 'Campaign', 'Revenue', 'Payout', 'Margin'], rows, `${page.data.length} ${page.data.length === 1 ? 'entry' : 'entries'}, oldest first`, undefined, 'ledger-list'));
  const nav = h('div', { class: 'pager' });
  if (s.get('cursor')) {
    const back = new URLSearchParams(s);
    back.delete('cursor');
    nav.append(link(`/ledger?${back}`, 'First page', { class: 'button secondary' }));
  }
  if (page.has_more && page.next_cursor) {
    const next = new URLSearchParams(s);
    next.set('cursor', page.next_cursor);
    nav.append(link(`/ledger?${next}`, 'Next page', { class: 'button' }));
  }
  root.append(nav);
}
