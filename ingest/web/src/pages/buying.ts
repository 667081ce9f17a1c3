// A buyer's own settings (GET /v1/account): its status with Pause and Resume, its caps and
// budgets with their use, its caps and filters editable where the operator allows it
// (self_service), and its delivery, pricing and schedule read-only.
import { get, post, put } from '../api';
import { Ctx } from '../app';
import { Child, button, field, h, input, notice } from '../dom';
import { FormErrors } from '../form';
import { money, splitList } from '../format';
import { Limit, limitLine } from '../buyer_portal';
import { isStale, staleNotice } from '../versions';

export interface Account {
  buyer_id: string;
  name: string;
  status: 'active' | 'paused';
  verticals: string[];
  delivery: Record<string, any>;
  pricing: Record<string, any>;
  filters: Record<string, any>;
  schedule: Record<string, any> | null;
  caps: Record<string, number> | null;
  return_window_days: number;
  self_service: { caps: boolean; filters: boolean };
  limits: Limit[];
  health: Record<string, any>;
  version: number;
}

const CAPS: [string, string][] = [
  ['hourly', 'Hourly cap (leads)'],
  ['daily', 'Daily cap (leads)'],
  ['weekly', 'Weekly cap (leads)'],
  ['monthly', 'Monthly cap (leads)'],
  ['daily_budget', 'Daily budget ($)'],
  ['monthly_budget', 'Monthly budget ($)'],
];
const FILTERS: [string, string][] = [
  ['states', 'States'],
  ['exclude_states', 'Excluded states'],
  ['zip_prefixes', 'ZIP prefixes'],
  ['sources', 'Sources'],
];

/** A cap or budget as a bar with "x of y" and when it starts again. */
export function limitBar(l: Limit): HTMLElement {
  const line = limitLine(l);
  const pct = Math.round(line.share * 100);
  // Set through the CSSOM: the page's CSP refuses style attributes.
  const fill = h('span');
  fill.style.width = `${pct}%`;
  return h(
    'div',
    { class: 'limit', 'data-limit': `${l.period}-${l.kind}` },
    h('div', { class: 'limit-head' }, h('span', { class: 'limit-label' }, line.label), h('span', { class: 'limit-text' }, line.text)),
    h('div', { class: 'limit-bar', role: 'meter', 'aria-label': `${line.label}: ${line.text}`, 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct }, fill),
    h('div', { class: 'muted small' }, line.resets),
  );
}

/** The caps and budgets card's content: a bar each, or what to do without any. */
export function limitBars(limits: Limit[]): Child {
  if (!limits.length) return h('p', { class: 'muted' }, 'No caps or budgets: you buy as many leads as you win.');
  return h('div', { class: 'limits' }, limits.map(limitBar));
}

function dl(pairs: [string, Child][]): HTMLElement {
  return h('dl', { class: 'props' }, pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v === null || v === undefined || v === '' ? '—' : v)]));
}

function statusCard(ctx: Ctx, a: Account): HTMLElement {
  const paused = a.status === 'paused';
  const said = h('div', { class: 'form-summary' });
  const act = button(paused ? 'Resume buying' : 'Pause buying', async () => {
    act.disabled = true;
    try {
      await post(`/v1/account/${paused ? 'resume' : 'pause'}`, {});
      ctx.go('/buying');
    } catch (e) {
      act.disabled = false;
      said.replaceChildren(notice(e instanceof Error ? e.message : String(e), 'error'));
    }
  }, { id: paused ? 'resume' : 'pause', class: paused ? '' : 'secondary' });
  return h(
    'section',
    { class: 'card', id: 'buying-status' },
    h('h2', {}, 'Status'),
    h('p', {}, 'Buying is ', h('strong', { id: 'buying-state' }, paused ? 'paused' : 'active'), paused ? ': you are offered no leads until you resume.' : ': you are offered leads as they arrive.'),
    said,
    act,
  );
}

function capsCard(ctx: Ctx, a: Account): HTMLElement {
  const card = h('section', { class: 'card', id: 'buying-caps' }, h('h2', {}, 'Caps and budgets'), limitBars(a.limits));
  if (!a.self_service.caps) {
    card.append(h('p', { class: 'muted small' }, 'Your caps are set by the operator: ask them to change one.'));
    return card;
  }
  const caps = a.caps ?? {};
  const fields = CAPS.map(([k, label]) => field(`caps.${k}`, label, input({ type: 'number', min: 0, step: k.endsWith('budget') ? '0.01' : '1', value: caps[k] ?? '', inputmode: 'decimal' }), 'empty: no limit'));
  const errors = new FormErrors(fields);
  const form = h('form', { class: 'buying-form', id: 'caps-form', novalidate: true, 'aria-label': 'Edit caps and budgets' }, errors.element, h('div', { class: 'grid3' }, fields.map((f) => f.wrapper)), h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save caps')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const next: Record<string, number> = {};
    for (const f of fields) if (f.control.value.trim() !== '') next[f.name.slice(5)] = Number(f.control.value);
    try {
      await put('/v1/account', { caps: next }, a.version);
      ctx.go('/buying?saved=caps');
    } catch (e) {
      if (isStale(e)) return errors.element.replaceChildren(staleNotice('account', () => ctx.go('/buying')));
      errors.show(e);
    }
  });
  card.append(form);
  return card;
}

function filtersCard(ctx: Ctx, a: Account): HTMLElement {
  const f = a.filters ?? {};
  const list = (v: unknown) => (Array.isArray(v) && v.length ? v.join(', ') : 'any');
  const custom = Array.isArray(f.custom) && f.custom.length ? f.custom.map((r: any) => `${r.field} ${r.op}${r.value === undefined ? '' : ' ' + JSON.stringify(r.value)}`).join('; ') : 'none';
  const card = h('section', { class: 'card', id: 'buying-filters' }, h('h2', {}, 'Filters'));
  if (!a.self_service.filters) {
    card.append(dl([...FILTERS.map(([k, label]) => [label, list(f[k])] as [string, Child]), ['Custom rules', custom]]), h('p', { class: 'muted small' }, 'Your filters are set by the operator: ask them to change one.'));
    return card;
  }
  const fields = FILTERS.map(([k, label]) => field(`filters.${k}`, label, input({ value: Array.isArray(f[k]) ? f[k].join(', ') : '' }), 'comma-separated; empty: any'));
  const errors = new FormErrors(fields);
  const form = h('form', { class: 'buying-form', id: 'filters-form', novalidate: true, 'aria-label': 'Edit filters' }, errors.element, h('div', { class: 'grid2' }, fields.map((x) => x.wrapper)), h('p', { class: 'muted small' }, `Custom rules (kept): ${custom}`), h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save filters')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const next: Record<string, unknown> = { custom: f.custom ?? [] };
    for (const x of fields) next[x.name.slice(8)] = splitList(x.control.value);
    try {
      await put('/v1/account', { filters: next }, a.version);
      ctx.go('/buying?saved=filters');
    } catch (e) {
      if (isStale(e)) return errors.element.replaceChildren(staleNotice('account', () => ctx.go('/buying')));
      errors.show(e);
    }
  });
  card.append(form);
  return card;
}

function deliveryCard(a: Account): HTMLElement {
  const d = a.delivery ?? {};
  const headers = Object.entries(d.headers ?? {}).map(([k, v]) => `${k}: ${v}`).join('; ');
  const p = a.pricing ?? {};
  const price = p.model === 'fixed' ? `fixed, ${money(p.price)}` : `bid, floor ${money(p.min_bid ?? 0)}`;
  const hours = a.schedule ? `${a.schedule.timezone}: ` + Object.entries(a.schedule.hours ?? {}).map(([day, r]) => `${day} ${(r as string[][]).map((x) => x.join('–')).join(', ') || 'closed'}`).join('; ') : 'always open';
  return h(
    'section',
    { class: 'card', id: 'buying-delivery' },
    h('h2', {}, 'Delivery and pricing'),
    dl([
      ['Verticals', a.verticals.join(', ')],
      ['Mode', d.mode === 'ping_post' ? 'ping/post' : 'direct post'],
      ['Ping URL', d.ping_url ? h('span', { class: 'mono wrap' }, d.ping_url) : null],
      ['Post URL', h('span', { class: 'mono wrap' }, d.post_url)],
      ['Timeout', `${d.timeout_ms} ms`],
      ['Headers', headers || 'none'],
      ['Pricing', price],
      ['Schedule', hours],
      ['Return window', a.return_window_days ? `${a.return_window_days} days` : 'no returns'],
    ]),
    h('p', { class: 'muted small' }, 'Set by the operator: ask them to change your delivery or pricing.'),
  );
}

export async function buyingPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const { data: a } = await get<{ data: Account }>('/v1/account');
  const saved = ctx.search.get('saved');
  root.append(
    h('h1', {}, 'Buying'),
    h('p', { class: 'muted' }, `${a.name} · `, h('span', { class: 'mono' }, a.buyer_id)),
    saved ? notice(`Your ${saved === 'caps' ? 'caps' : 'filters'} were saved.`, 'ok') : '',
    statusCard(ctx, a),
    capsCard(ctx, a),
    filtersCard(ctx, a),
    deliveryCard(a),
  );
}
