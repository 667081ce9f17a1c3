import { ApiError, get, post, put } from '../api';
import { Ctx } from '../app';
import { BUYER_FIELDS, buildBuyerBody, getPath, toText } from '../buyer_form';
import { Field, button, field, h, input, link, notice, select, table, textarea } from '../dom';
import { FormErrors } from '../form';
import { isStale, staleNotice } from '../versions';
import { counted, dateTime, duration, money, percent } from '../format';

type Buyer = Record<string, any>;

function health(b: Buyer): HTMLElement {
  const hl = b.health;
  if (!hl) return h('span', { class: 'muted' }, b.status === 'paused' ? 'paused' : 'no health data');
  const bad = hl.flagged || hl.status === 'paused' || hl.status === 'cooling_down';
  return h(
    'span',
    { class: bad ? 'health health-bad' : 'health' },
    `${hl.status ?? b.status}; ${hl.pings_24h ? `errors ${percent(hl.error_rate_24h)} of ${hl.pings_24h} pings, ${hl.timeouts_24h ?? 0} timeouts (24 h)` : 'no pings in 24 h'}; returns ${percent(hl.return_rate)}${hl.flagged ? '; flagged' : ''}`,
  );
}

async function setStatus(b: Buyer, status: string, ctx: Ctx): Promise<void> {
  await put(`/v1/buyers/${encodeURIComponent(b.buyer_id)}`, { status }, b.version);
  ctx.go(location.pathname + location.search);
}

export async function buyersPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  root.append(h('div', { class: 'title-row' }, h('h1', {}, 'Buyers'), link('/buyers/new', 'New buyer', { class: 'button' })));
  const msg = h('div');
  root.append(msg);
  const all: Buyer[] = [];
  let cursor = '';
  for (let i = 0; i < 20; i++) {
    const page = await get<{ data: Buyer[]; has_more?: boolean; next_cursor?: string }>(`/v1/buyers?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    all.push(...page.data);
    if (!page.has_more || !page.next_cursor) break;
    cursor = page.next_cursor;
  }
  root.append(
    table(
      ['Buyer', 'Status', 'Verticals', 'Pricing', 'Health', ''],
      all.map((b) => [
        h('span', {}, link(`/buyers/${encodeURIComponent(b.buyer_id)}`, b.name), h('br'), h('span', { class: 'mono muted' }, b.buyer_id)),
        h('span', { class: `badge badge-${b.status}` }, b.status),
        (b.verticals ?? []).join(', '),
        b.pricing?.model === 'fixed' ? `fixed ${money(b.pricing.price)}` : `bid ≥ ${money(b.pricing?.min_bid ?? 0)}`,
        health(b),
        button(b.status === 'active' ? 'Pause' : 'Resume', () => setStatus(b, b.status === 'active' ? 'paused' : 'active', ctx).catch((e) => msg.replaceChildren(isStale(e) ? staleNotice('buyer', () => ctx.go(location.pathname + location.search)) : notice(String(e.message ?? e), 'error'))), { class: 'secondary small', 'aria-label': `${b.status === 'active' ? 'Pause' : 'Resume'} ${b.name}` }),
      ]),
      counted(all.length, 'buyer'),
      ['No buyers yet: ', link('/buyers/new', 'add the first buyer'), ' to sell leads to.'],
    ),
  );
}

export async function buyerEditPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const id = ctx.params.id;
  let buyer: Buyer = { status: 'active', delivery: { mode: 'ping_post', timeout_ms: 1000 }, pricing: { model: 'bid', min_bid: 0 } };
  if (id) buyer = (await get<{ data: Buyer }>(`/v1/buyers/${encodeURIComponent(id)}`)).data;
  root.append(h('p', {}, link('/buyers', '← Buyers')), h('h1', {}, id ? `Buyer ${buyer.name}` : 'New buyer'));
  if (id) root.append(h('p', { class: 'muted' }, h('span', { class: 'mono' }, id), ` · updated ${dateTime(buyer.updated_at)}`), h('p', {}, health(buyer)));

  const fields: Field[] = [];
  const groups = new Map<string, HTMLElement>();
  for (const f of BUYER_FIELDS) {
    const text = toText(f, getPath(buyer, f.name));
    const control =
      f.kind === 'select' ? select(f.options!, text || f.options![0]) : f.kind === 'json' ? textarea(text, { class: 'mono', spellcheck: 'false' }) : input({ type: f.kind === 'number' ? 'text' : f.kind === 'url' ? 'url' : 'text', inputmode: f.kind === 'number' ? 'decimal' : undefined, value: text });
    const fl = field(f.name, f.label, control, f.hint);
    fields.push(fl);
    if (!groups.has(f.group)) groups.set(f.group, h('fieldset', {}, h('legend', {}, f.group)));
    groups.get(f.group)!.appendChild(fl.wrapper);
  }
  const errors = new FormErrors(fields);
  const saved = h('div', { role: 'status' });
  const form = h('form', { class: 'buyer-form', novalidate: true }, errors.element, [...groups.values()], h('div', { class: 'actions' }, h('button', { type: 'submit' }, id ? 'Save' : 'Create buyer')), saved);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    saved.replaceChildren();
    const values: Record<string, string> = {};
    for (const f of fields) values[f.name] = f.control.value;
    const built = buildBuyerBody(values, Boolean(id));
    if (built.errors.length) {
      errors.show(new ApiError(400, 'the buyer is invalid', built.errors));
      return;
    }
    try {
      if (id) {
        // Only over the version this page read: a change someone made since is never overwritten.
        const res = await put<{ data: Buyer }>(`/v1/buyers/${encodeURIComponent(id)}`, built.body, buyer.version);
        buyer.version = res.data.version;
        errors.clear();
        saved.replaceChildren(notice('Saved.', 'ok'));
      } else {
        const made = await post<{ data: Buyer }>('/v1/buyers', built.body);
        ctx.go(`/buyers/${encodeURIComponent(made.data.buyer_id)}?created=1`);
      }
    } catch (e) {
      if (!isStale(e)) return errors.show(e);
      errors.clear();
      saved.replaceChildren(staleNotice('buyer', () => ctx.go(location.pathname)));
    }
  });
  if (ctx.search.get('created')) root.append(notice('Buyer created.', 'ok'));
  root.append(form);

  if (id) {
    const out = h('div', { class: 'ping-result', role: 'status' });
    root.append(
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Test ping'),
        h('p', { class: 'muted' }, "Sends a sample ping (no personal data) to the buyer's endpoint and shows its answer."),
        button('Send a test ping', async () => {
          out.replaceChildren(h('p', {}, 'Pinging…'));
          try {
            const r = await post<{ data: Buyer }>(`/v1/buyers/${encodeURIComponent(id)}/test-ping`, {});
            const d = r.data;
            out.replaceChildren(
              table(['URL', 'Outcome', 'HTTP', 'Bid', 'Duration', 'Reason'], [[d.url, d.outcome, d.http_status || '—', d.bid === null || d.bid === undefined ? '—' : money(d.bid), duration(d.duration_ms), d.reason || '—']]),
            );
          } catch (e) {
            out.replaceChildren(notice(String((e as Error).message), 'error'));
          }
        }, { id: 'test-ping' }),
        out,
      ),
    );
  }
}
