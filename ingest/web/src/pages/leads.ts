import { Page as ApiPage, get, query } from '../api';
import { Ctx, isOperator } from '../app';
import { field, h, input, link, notice, select, table } from '../dom';
import { Lead, attemptsTable, distributionPairs, leadCells, leadColumns, offerPairs, returnsTable } from '../lead_view';
const STATUSES = ['', 'pending', 'delivered', 'unsold', 'duplicate', 'rejected', 'failed', 'returned'];

function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge badge-${status}` }, status);
}

export async function leadsPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const s = ctx.search;
  // Filters on another party are the operator's only: the API refuses them to sellers and buyers.
  const op = isOperator(ctx.user);
  const names = ['status', 'vertical', 'source', ...(op ? ['buyer_id', 'seller_id'] : []), 'created_from', 'created_to'];
  const fields = [
    field('status', 'Status', select(STATUSES.map((v) => [v, v || 'any'] as [string, string]), s.get('status') ?? '')),
    field('vertical', 'Vertical', input({ value: s.get('vertical') ?? '' })),
    field('source', 'Source', input({ value: s.get('source') ?? '' })),
    ...(op ? [field('buyer_id', 'Buyer id', input({ value: s.get('buyer_id') ?? '' })), field('seller_id', 'Seller id', input({ value: s.get('seller_id') ?? '' }))] : []),
    field('created_from', 'From (date)', input({ type: 'date', value: s.get('created_from') ?? '' })),
    field('created_to', 'To (date)', input({ type: 'date', value: s.get('created_to') ?? '' })),
  ];
  const form = h('form', { class: 'filters', 'aria-label': 'Filter leads' }, fields.map((f) => f.wrapper), h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Filter'), link('/leads', 'Clear', { class: 'button secondary' })));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const params: Record<string, string> = {};
    for (const f of fields) params[f.name] = f.control.value;
    ctx.go(`/leads${query(params)}`);
  });
  root.append(h('h1', {}, 'Leads'), form);

  const params: Record<string, string> = { limit: s.get('limit') ?? '25', cursor: s.get('cursor') ?? '' };
  for (const n of names) params[n] = s.get(n) ?? '';
  let page: ApiPage<Lead>;
  try {
    page = await get<ApiPage<Lead>>(`/v1/leads${query(params)}`);
  } catch (e) {
    root.append(notice(e instanceof Error ? e.message : String(e), 'error'));
    return;
  }
  const account = ctx.user.account;
  const rows = page.data.map((l) => {
    const cells: (string | HTMLElement)[] = leadCells(l, account);
    cells[1] = statusBadge(l.status);
    return [link(`/leads/${encodeURIComponent(l.lead_id)}`, l.lead_id, { class: 'mono' }), ...cells];
  });
  root.append(table(['Lead', ...leadColumns(account)], rows, `${page.data.length} leads, newest first`));
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

function dl(pairs: [string, unknown][]): HTMLElement {
  return h('dl', { class: 'props' }, pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v === null || v === undefined || v === '' ? '—' : String(v))]));
}

export async function leadPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const id = ctx.params.id;
  const account = ctx.user.account;
  const { data: l } = await get<{ data: Lead }>(`/v1/leads/${encodeURIComponent(id)}`);
  root.append(
    h('p', {}, link('/leads', '← Leads')),
    h('h1', {}, 'Lead ', h('span', { class: 'mono' }, l.lead_id), ' ', statusBadge(l.status)),
    h(
      'div',
      { class: 'grid2' },
      h('section', { class: 'card' }, h('h2', {}, 'Person'), dl([['Name', `${l.first_name ?? ''} ${l.last_name ?? ''}`], ['E-mail', l.email], ['Phone', l.phone], ['ZIP', l.zip_code], ['State', l.state], ['IP address', l.ip_address]])),
      h('section', { class: 'card' }, h('h2', {}, 'Distribution'), dl(distributionPairs(l, account))),
    ),
  );
  const attempts = attemptsTable(l);
  if (attempts) root.append(h('h2', {}, 'Timeline'), table(attempts.head, attempts.rows, `${attempts.rows.length} attempts (pings and posts)`));
  const offers = offerPairs(l);
  if (offers) root.append(h('h2', {}, 'Offered to buyers'), dl(offers));
  const ineligible: Lead[] = l.ineligible_buyers ?? [];
  if (ineligible.length || (l.status === 'unsold' && Array.isArray(l.ineligible_buyers))) {
    root.append(h('h2', {}, 'Buyers not eligible'), table(['Buyer', 'Why'], ineligible.map((i) => [i.buyer_id, i.reason]), 'Why each buyer did not take part'));
  }
  const reasons: string[] = l.ineligible_reasons ?? [];
  if (reasons.length) root.append(h('h2', {}, 'Why buyers did not take part'), h('ul', {}, reasons.map((r) => h('li', {}, r))));
  const returns = returnsTable(l, account);
  if (returns) root.append(h('h2', {}, 'Returns'), table(returns.head, returns.rows, `${returns.rows.length} returns`));
}
