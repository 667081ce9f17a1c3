import { ApiError, get, post, put, query } from '../api';
import { counted } from '../format';
import { Ctx, isOperator } from '../app';
import { Field, button, field, h, input, link, notice, select, table } from '../dom';
import { FormErrors } from '../form';
import { shownOnce } from '../secret';
import { isStale, staleNotice } from '../versions';
import { testBadge } from '../test_mode';
import { sellersTestMode } from './seller_test_mode';
import { reofferBody, reofferFields, reofferText } from './campaign_reoffer';

type Rec = Record<string, any>;

function payoutText(p: Rec | undefined): string {
  if (!p) return '—';
  return p.model === 'revshare' ? `${p.value}% revshare` : `$${Number(p.value).toFixed(2)} fixed`;
}

/** The campaign body from the form (empty fields left to the API's defaults). */
export function campaignBody(v: Record<string, string>, creating: boolean): Rec {
  const body: Rec = {};
  if (creating) {
    body.seller_id = v.seller_id;
    body.vertical = v.vertical;
  }
  if (v.name) body.name = v.name;
  if (v.status) body.status = v.status;
  if (v.mode) body.mode = v.mode;
  for (const k of ['sync_timeout_ms', 'rate_limit_per_minute']) if (v[k]?.trim()) body[k] = Number(v[k]);
  if (v['payout.value']?.trim()) body.payout = { model: v['payout.model'], value: Number(v['payout.value']) };
  if (v.test_mode) body.test_mode = v.test_mode === 'true';
  // The vertical's policy is the default: a new campaign names none unless it has its own.
  if (v.reoffer && (!creating || v.reoffer !== 'vertical')) body.reoffer = reofferBody(v);
  return body;
}

/** `onStale`: reloads the campaign after someone else changed it (the edit was refused). */
function campaignForm(sellers: Rec[], c: Rec | null, onDone: (made: Rec) => void, onStale: () => void = () => {}): HTMLFormElement {
  const creating = !c;
  const fields: Field[] = [];
  if (creating) {
    fields.push(field('seller_id', 'Seller', select(sellers.map((s) => [s.seller_id, `${s.name} (${s.seller_id})`] as [string, string]))));
    fields.push(field('vertical', 'Vertical', input({ value: 'auto_insurance' })));
  }
  fields.push(
    field('name', 'Name', input({ value: c?.name ?? '' })),
    field('status', 'Status', select(['active', 'paused'], c?.status ?? 'active')),
    field('mode', 'Mode', select(['sync', 'async'], c?.mode ?? 'sync')),
    field('sync_timeout_ms', 'Sync timeout (ms)', input({ inputmode: 'numeric', value: c?.sync_timeout_ms ?? '' })),
    field('rate_limit_per_minute', 'Rate ceiling (leads a minute)', input({ inputmode: 'numeric', value: c?.rate_limit_per_minute ?? '' })),
    field('payout.model', 'Payout model', select([['revshare', 'revshare (percent)'], ['fixed', 'fixed (price)']], c?.payout?.model ?? 'revshare')),
    field('payout.value', 'Payout value', input({ inputmode: 'decimal', value: c?.payout?.value ?? '' })),
    field('test_mode', 'Test mode', select([['false', 'off: real leads'], ['true', 'on: every lead is a test']], c?.test_mode ? 'true' : 'false'), 'A test lead is stored and shown, never offered to a buyer.'),
    ...reofferFields(c),
  );
  const errors = new FormErrors(fields);
  const form = h('form', { class: 'grid-form', novalidate: true }, errors.element, fields.map((f) => f.wrapper), h('div', { class: 'actions' }, h('button', { type: 'submit' }, creating ? 'Create campaign' : 'Save campaign')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const v: Record<string, string> = {};
    for (const f of fields) v[f.name] = f.control.value;
    try {
      const body = campaignBody(v, creating);
      const res = creating ? await post<{ data: Rec }>('/v1/campaigns', body) : await put<{ data: Rec }>(`/v1/campaigns/${encodeURIComponent(c!.campaign_id)}`, body, c!.version);
      errors.clear();
      onDone(res.data);
    } catch (e) {
      if (!isStale(e)) return errors.show(e);
      errors.clear();
      errors.element.replaceChildren(staleNotice('campaign', onStale));
    }
  });
  return form;
}

export async function campaignsPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  // A seller reads its own campaigns (where the server lets it); only the operator changes them.
  const operator = isOperator(ctx.user);
  const sellers = operator ? (await get<{ data: Rec[] }>('/v1/sellers')).data : [];
  const secret = h('div');
  const editing = h('div');
  const list = h('div');
  const sellerName = new Map(sellers.map((s) => [s.seller_id, s.name]));
  root.append(h('h1', {}, 'Campaigns'), secret, list, editing);

  // The list, drawn again after a campaign is made (the key shown above it stays).
  const drawList = async () => {
    let campaigns: Rec[];
    try {
      campaigns = (await get<{ data: Rec[] }>('/v1/campaigns')).data;
    } catch (e) {
      if (operator || !(e instanceof ApiError) || e.status !== 403) throw e;
      list.replaceChildren(notice('This server shows campaigns to the operator only; ask the operator for your campaigns and their figures.', 'info'));
      return;
    }
    list.replaceChildren(
      table(
        ['Campaign', 'Seller', 'Vertical', 'Status', 'Mode', 'Payout', 'Rate ceiling', 'Second chances', 'Key', ''],
        campaigns.map((c) => [
          h('span', {}, c.name, c.test_mode ? ' ' : null, testBadge(c.test_mode, 'mode'), h('br'), h('span', { class: 'mono muted' }, c.campaign_id)),
          sellerName.get(c.seller_id) ?? c.seller_id ?? '—',
          c.vertical,
          h('span', { class: `badge badge-${c.status}` }, c.status),
          c.mode === 'sync' ? `sync (${c.sync_timeout_ms} ms)` : 'async',
          payoutText(c.payout),
          `${c.rate_limit_per_minute}/min`,
          reofferText(c.reoffer),
          h('span', { class: 'mono' }, c.campaign_key_hint ?? '—'),
          h(
            'span',
            { class: 'row-actions' },
            link(`/reports${query({ campaign_id: c.campaign_id, group_by: 'day' })}`, 'Stats', { 'aria-label': `Stats of ${c.name}` }),
            ' ',
            link(`/campaigns/${encodeURIComponent(c.campaign_id)}/specification`, 'Specification', { 'aria-label': `Specification of ${c.name}` }),
            operator && ' ',
            operator && button('Edit', () => {
              editing.replaceChildren(h('section', { class: 'card' }, h('h2', {}, `Edit ${c.name}`), campaignForm(sellers, c, () => ctx.go('/campaigns'), () => ctx.go('/campaigns'))));
              (editing.querySelector('input, select') as HTMLElement | null)?.focus();
            }, { class: 'secondary small', 'aria-label': `Edit ${c.name}` }),
            operator && ' ',
            operator && button(c.status === 'active' ? 'Pause' : 'Resume', async () => {
              try {
                await put(`/v1/campaigns/${encodeURIComponent(c.campaign_id)}`, { status: c.status === 'active' ? 'paused' : 'active' }, c.version);
                await drawList();
              } catch (e) {
                secret.replaceChildren(isStale(e) ? staleNotice('campaign', () => { secret.replaceChildren(); void drawList(); }) : notice(String((e as Error).message), 'error'));
              }
            }, { class: 'secondary small', 'aria-label': `${c.status === 'active' ? 'Pause' : 'Resume'} ${c.name}` }),
          ),
        ]),
        counted(campaigns.length, 'campaign'),
        operator ? 'No campaigns yet: create one below; its key is what a seller posts with.' : 'No campaigns yet: the operator sets them up for you.',
      ),
    );
  };
  await drawList();
  if (!operator) return;
  if (!sellers.length) {
    root.append(notice('There is no seller yet: a campaign belongs to a seller (leadflow-admin create-seller, or POST /v1/sellers).', 'info'));
    return;
  }
  const form = campaignForm(sellers, null, (made) => {
    secret.replaceChildren(shownOnce(`Campaign key of ${made.name}`, made.campaign_key));
    (form.elements.namedItem('name') as HTMLInputElement).value = '';
    void drawList();
    secret.scrollIntoView();
    (secret.querySelector('button') as HTMLElement | null)?.focus();
  });
  root.append(h('section', { class: 'card' }, h('h2', {}, 'New campaign'), form));
  root.append(sellersTestMode(sellers, () => ctx.go('/campaigns')));
}
