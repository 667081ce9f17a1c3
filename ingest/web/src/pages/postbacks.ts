// Postbacks (docs/postbacks.md): a seller's endpoints, told of its leads sold, unsold, returned
// and settled; the operator sees every seller's. Each endpoint's delivery log shows its events,
// their attempts (status, latency) and a button that sends one again. Each endpoint's secret can
// be rotated from the list (postbacks_rotate.ts).
import { ApiError, Page as ApiPage, del, etagOf, get, post, query, request } from '../api';
import { Ctx, isOperator } from '../app';
import { Field, button, emptyState, field, h, input, link, notice, select, table } from '../dom';
import { FormErrors } from '../form';
import { dateTime } from '../format';
import { shownOnce } from '../secret';
import { askRotation, secretState } from './postbacks_rotate';
import { zoneNote } from './settings_menu';
import { isStale, staleNotice } from '../versions';

/** An endpoint as GET /v1/postback-endpoints answers it. */
export interface Endpoint {
  id: string;
  seller_id: string;
  campaign_id: string | null;
  url: string;
  events: string[];
  active: boolean;
  /** Its version (docs/versions.md): a change is sent with it as If-Match. */
  version?: number;
  switched_off_at?: string | null;
  failing?: boolean | null;
  created_at: string;
  secret?: string;
  secret_rotated_at?: string | null;
  previous_secret_expires_at?: string | null;
}

/** One row of an endpoint's delivery log. */
export interface Delivery {
  event_id: string;
  type: string;
  lead_id: string;
  occurred_at: string;
  state: 'pending' | 'delivered' | 'expired';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

export interface Attempt {
  at: string;
  status: number | null;
  latency_ms: number;
  error: string | null;
  then: string;
}

export const EVENTS = ['lead.sold', 'lead.unsold', 'lead.returned', 'lead.settled'];

/** The body of a new endpoint from the form's values; `events` the ticked ones. */
export function endpointBody(v: Record<string, string>, events: string[], operator: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { url: v.url.trim(), events };
  if (v.campaign_id) body.campaign_id = v.campaign_id;
  if (operator) body.seller_id = v.seller_id.trim();
  return body;
}

/** Whether an endpoint is on, and when off since when and what that means for its events. */
export function switchState(e: Pick<Endpoint, 'active' | 'switched_off_at'>, tz?: string): string {
  if (e.active) return 'on';
  const since = e.switched_off_at ? ` since ${dateTime(e.switched_off_at, tz)}` : '';
  return `off${since}: the events of its time on wait until it is on again; those of its time off are not sent to it`;
}

/** On or off, and a badge when its last attempts, from every process, all failed. */
function activeCell(e: Endpoint): HTMLElement {
  return h('span', {}, e.active ? 'on' : 'off', ...(e.failing ? [' ', h('span', { class: 'badge badge-failed', title: failingNote }, 'failing')] : []));
}

/** What "failing" means, where it is shown. */
export const failingNote = 'its last 5 attempts all failed: its events are retried for 24 hours, see its delivery log';

/** What the last attempt came to, in a few words. */
export function lastResult(d: Delivery): string {
  if (d.attempts === 0) return 'not tried yet';
  if (d.last_status !== null) return `HTTP ${d.last_status}`;
  return d.last_error ?? 'no answer';
}

function stateBadge(state: string): HTMLElement {
  return h('span', { class: `badge badge-${state === 'expired' ? 'failed' : state}` }, state);
}

/** /settings/postbacks: the endpoints and a form that adds one. */
export async function postbacksPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const operator = isOperator(ctx.user);
  const list = await get<ApiPage<Endpoint>>('/v1/postback-endpoints');
  const campaigns = operator ? [] : (await get<ApiPage<{ campaign_id: string; name: string }>>('/v1/campaigns')).data;
  root.append(
    h('h1', {}, 'Postbacks'),
    h('p', { class: 'muted' }, 'Your endpoints are sent a signed event when a lead is sold, unsold, returned or settled. ', h('a', { href: '#verify' }, 'How to verify one'), '.'),
  );
  // The endpoints, drawn again once one is added (the secret shown once stays on the page).
  const listBox = h('div', { id: 'postback-endpoints' });
  const rotateBox = h('div', { id: 'postback-rotation' });
  const redraw = async () => drawList((await get<ApiPage<Endpoint>>('/v1/postback-endpoints')).data);
  // A rotation makes the secret shown at creation the old one: it leaves the page.
  const rotated = async () => {
    made.replaceChildren();
    await redraw();
  };
  const drawList = (endpoints: Endpoint[]) => {
    const rows = endpoints.map((e) => [
      link(`/settings/postbacks/${e.id}`, e.url, { class: 'mono' }),
      e.events.join(', '),
      e.campaign_id ?? 'all campaigns',
      ...(operator ? [e.seller_id] : []),
      activeCell(e),
      h('div', {}, h('div', { class: 'muted small' }, secretState(e)), button('Rotate secret', () => askRotation(rotateBox, e, rotated), { class: 'small secondary', 'aria-label': `Rotate secret of ${e.url}` })),
    ]);
    const headers = ['URL', 'Events', 'Campaign', ...(operator ? ['Seller'] : []), 'Active', 'Secret'];
    listBox.replaceChildren(endpoints.length ? table(headers, rows, `${endpoints.length} ${endpoints.length === 1 ? 'endpoint' : 'endpoints'}`, undefined, 'postback-list') : emptyState('No endpoint yet: add one below to be told of your leads without asking.'));
  };
  drawList(list.data);
  root.append(listBox, rotateBox);

  const fields: Field[] = [field('url', 'URL', input({ type: 'url', placeholder: 'https://example.com/leadflow', required: true }))];
  if (operator) fields.push(field('seller_id', 'Seller', input({ placeholder: 'sl_…', required: true })));
  else fields.push(field('campaign_id', 'Campaign', select([['', 'All campaigns'], ...campaigns.map((c) => [c.campaign_id, c.name] as [string, string])])));
  const boxes = EVENTS.map((name) => input({ type: 'checkbox', name: 'events', value: name, checked: true }));
  const events = h('fieldset', { class: 'field' }, h('legend', {}, 'Events'), h('div', { class: 'checks' }, boxes.map((b) => h('label', { class: 'check' }, b, b.value))));
  const errors = new FormErrors(fields);
  const made = h('div', { id: 'postback-made' });
  const form = h('form', { class: 'card', id: 'postback-form', novalidate: true }, h('h2', {}, 'Add an endpoint'), errors.element, fields.map((f) => f.wrapper), events, h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Add endpoint')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const values: Record<string, string> = {};
    for (const f of fields) values[f.name] = f.control.value;
    const ticked = boxes.filter((b) => b.checked).map((b) => b.value);
    try {
      const res = await post<{ data: Endpoint }>('/v1/postback-endpoints', endpointBody(values, ticked, operator));
      rotateBox.replaceChildren();
      made.replaceChildren(shownOnce('Signing secret', res.data.secret ?? ''), h('p', {}, link(`/settings/postbacks/${res.data.id}`, 'Open its delivery log')));
      form.reset();
      await redraw();
    } catch (e) {
      errors.show(e);
    }
  });
  root.append(made, form, verifyHelp());
}

function verifyHelp(): HTMLElement {
  return h(
    'section',
    { id: 'verify' },
    h('h2', {}, 'Verifying a postback'),
    h('p', {}, 'Each request carries ', h('code', {}, 'Leadflow-Signature: t=<unix seconds>,v1=<hex>'), ': the HMAC-SHA256, under the endpoint’s secret, of t, a dot and the raw body. Compare it in constant time, refuse a t more than 300 seconds from your clock, answer 2xx once you kept the event, and drop an event id (', h('code', {}, 'Leadflow-Event-Id'), ') you already have: a failed attempt is retried for 24 hours.'),
    h('p', {}, 'After a secret is rotated, the header carries two ', h('code', {}, 'v1'), ' values until the old secret ends, one per secret: accept the request when any of them matches the secret you hold.'),
  );
}

/** Switches the endpoint on or off as the page read it: at its version (If-Match), so a change
 * someone else made meanwhile is refused (412) rather than undone. */
export function switchEndpoint(e: Pick<Endpoint, 'id' | 'active' | 'version'>): Promise<{ data: Endpoint }> {
  return request('PATCH', `/v1/postback-endpoints/${encodeURIComponent(e.id)}`, { active: !e.active }, etagOf(e.version));
}

/** /settings/postbacks/:id: the endpoint, switched on or off or deleted, and its delivery log. */
export async function postbackEndpointPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const id = ctx.params.id;
  const e = (await get<{ data: Endpoint }>(`/v1/postback-endpoints/${encodeURIComponent(id)}`)).data;
  const status = h('div', { role: 'status' });
  // A change refused: as stale (someone else changed the endpoint since the page read it), or why.
  const refused = (err: unknown) => status.replaceChildren(isStale(err) ? staleNotice('postback endpoint', () => ctx.go(location.pathname)) : notice(err instanceof ApiError ? err.message : String(err), 'error'));
  root.append(
    h('p', {}, link('/settings/postbacks', '← Postbacks')),
    h('h1', {}, 'Postback endpoint'),
    h('dl', { class: 'props' }, h('dt', {}, 'URL'), h('dd', { class: 'mono' }, e.url), h('dt', {}, 'Events'), h('dd', {}, e.events.join(', ')), h('dt', {}, 'Campaign'), h('dd', {}, e.campaign_id ?? 'all campaigns'), h('dt', {}, 'Active'), h('dd', {}, switchState(e)), ...(e.failing ? [h('dt', {}, 'Failing'), h('dd', {}, h('span', { class: 'badge badge-failed' }, 'failing'), ` ${failingNote}`)] : [])),
    h(
      'div',
      { class: 'actions' },
      button(e.active ? 'Switch off' : 'Switch on', async () => {
        try {
          await switchEndpoint(e);
          ctx.go(location.pathname);
        } catch (err) {
          refused(err);
        }
      }, { class: 'secondary' }),
      button('Delete endpoint', async () => {
        if (!confirm('Delete this endpoint and its delivery log?')) return;
        try {
          await del(`/v1/postback-endpoints/${id}`, e.version);
          ctx.go('/settings/postbacks');
        } catch (err) {
          refused(err);
        }
      }, { class: 'danger' }),
    ),
    status,
    h('h2', {}, 'Delivery log'),
    zoneNote(),
  );
  const page = await get<ApiPage<Delivery>>(`/v1/postback-endpoints/${id}/deliveries${query({ limit: 50, cursor: ctx.search.get('cursor') })}`);
  if (!page.data.length) {
    root.append(emptyState('No event yet: one is written as soon as a lead of yours is decided.'));
    return;
  }
  const rows = page.data.map((d) => {
    const attempts = h('div', { class: 'attempts' });
    const show = button(`Attempts (${d.attempts})`, async () => {
      const list = await get<{ data: Attempt[] }>(`/v1/postback-endpoints/${id}/deliveries/${d.event_id}/attempts`);
      attempts.replaceChildren(table(['When', 'Status', 'Latency', 'Error'], list.data.map((a) => [dateTime(a.at), a.status === null ? '—' : String(a.status), `${a.latency_ms.toFixed(0)} ms`, a.error ?? '—']), `Attempts of ${d.event_id}`, 'Not tried yet.'));
    }, { class: 'small secondary', disabled: d.attempts === 0 });
    const replay = button('Replay', async () => {
      try {
        await post(`/v1/postback-endpoints/${id}/deliveries/${d.event_id}/replay`, {});
        status.replaceChildren(notice(`Event ${d.event_id} will be sent again in a moment.`, 'ok'));
      } catch (err) {
        status.replaceChildren(notice(err instanceof ApiError ? err.message : String(err), 'error'));
      }
    }, { class: 'small', 'aria-label': `Replay ${d.event_id}` });
    return [
      h('div', {}, h('span', { class: 'mono small' }, d.event_id), h('div', { class: 'muted small' }, dateTime(d.occurred_at))),
      d.type,
      link(`/leads/${d.lead_id}`, d.lead_id, { class: 'mono small' }),
      stateBadge(d.state),
      h('div', {}, lastResult(d), d.next_attempt_at ? h('div', { class: 'muted small' }, `next ${dateTime(d.next_attempt_at)}`) : ''),
      h('div', { class: 'actions' }, show, replay, attempts),
    ];
  });
  root.append(table(['Event', 'Type', 'Lead', 'State', 'Last attempt', ''], rows, `${page.data.length} ${page.data.length === 1 ? 'event' : 'events'}, newest first`, undefined, 'delivery-log'));
  if (page.has_more && page.next_cursor) root.append(h('div', { class: 'pager' }, link(`/settings/postbacks/${id}?cursor=${encodeURIComponent(page.next_cursor)}`, 'Next page', { class: 'button' })));
}
