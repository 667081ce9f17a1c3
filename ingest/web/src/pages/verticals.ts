// Settings → Verticals: each vertical's fields and rules in words, as the reader may read them
// (GET /v1/verticals, docs/visibility.md "Verticals"): the operator every rule, a seller what it
// posts and whether its unsold leads are offered again, a buyer the verticals it buys. The rules
// are the LEADFLOW_VERTICALS file's, read at start, but for second chances, which the operator
// may change on a vertical's page (vertical_reoffer.ts); a campaign's own second chances (the
// operator's, and a seller's own campaigns) are named beside its vertical.
import { ApiError, get } from '../api';
import { Ctx, isOperator } from '../app';
import { Child, h, link, table } from '../dom';
import { counted, money } from '../format';
import { fieldRule } from './campaign_spec';
import { reofferText } from './campaign_reoffer';
import { verticalReofferCard } from './vertical_reoffer';

type Rec = Record<string, any>;
export type Reader = 'operator' | 'seller' | 'buyer';

const plural = (n: number, one: string) => `${n} ${n === 1 ? one : `${one}s`}`;

/** A delay in words: 900 → "15 min", 7200 → "2 h", 86400 → "1 day", 172800 → "2 days". */
export function delayLong(seconds: number): string {
  if (seconds % 86400 === 0) return plural(seconds / 86400, 'day');
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** A window in hours in words: 168 → "7 days", 36 → "36 h". */
export function hoursLong(hours: number): string {
  return hours % 24 === 0 ? plural(hours / 24, 'day') : `${hours} h`;
}

/** How many re-offers at most: "once", "twice", "3 times". */
export function timesWords(n: number): string {
  return n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`;
}

/** Where an aged lead's price comes from, as each reader needs to know it. */
function agedPrice(reader: Reader): string {
  if (reader === 'operator') return "aged price from each buyer's aged_price, else its aged bid";
  if (reader === 'buyer') return 'at your aged price, else the aged bid you answer, if your account takes aged leads';
  return 'a lead sold then pays you by your payout rule';
}

/** The vertical's second chances in a sentence: "Offered again after 15 min, 2 h, 1 day; at most
 *  3 times within 7 days; aged price from each buyer's aged_price, else its aged bid." */
export function reofferWords(r: Rec | null | undefined, reader: Reader): string {
  const delays: number[] = r?.delays_seconds ?? [];
  if (!delays.length) return 'Not offered again: a lead nobody buys live is final.';
  const within = r?.window_hours ? ` within ${hoursLong(r.window_hours)}` : '';
  return `Offered again after ${delays.map(delayLong).join(', ')}; at most ${timesWords(delays.length)}${within}; ${agedPrice(reader)}.`;
}

/** Shared sales: "Sold to one buyer only." or "Sold to one buyer, or shared by up to 3 buyers." */
export function salesWords(maxSales: number): string {
  return maxSales > 1 ? `Sold to one buyer, or shared by up to ${maxSales} buyers.` : 'Sold to one buyer only.';
}

/** Intake dedupe: "A lead with the e-mail or phone of one received in the last 30 days is a
 *  duplicate." or, with no lookback, "No duplicate check at intake." */
export function dedupeWords(days: number): string {
  if (!days) return 'No duplicate check at intake.';
  return `A lead with the e-mail or phone of one received in the last ${plural(days, 'day')} is a duplicate, not sold.`;
}

/** The consent window: "Sold only within 30 days of its receipt (the person's consent)." */
export function consentWords(days: number): string {
  return `Sold only within ${plural(days, 'day')} of its receipt (the person's consent).`;
}

/** The fields: "6 fields, none required" or "7 fields, 1 required: home_owner". */
export function fieldsWords(fields: Rec[] | undefined): string {
  const all = fields ?? [];
  const required = all.filter((f) => f.required).map((f) => String(f.name));
  const head = counted(all.length, 'field');
  return required.length ? `${head}, ${required.length} required: ${required.join(', ')}` : `${head}, none required`;
}

/** One rule of a vertical: its label and its words. */
export interface Rule {
  label: string;
  text: string;
}

/** The vertical's rules the reader was given, in the page's order: a member the API left out
 *  (not the reader's to see) is no rule. */
export function verticalRules(v: Rec, reader: Reader): Rule[] {
  const out: Rule[] = [];
  if ('duplicate_lookback_days' in v) out.push({ label: 'Duplicates', text: dedupeWords(v.duplicate_lookback_days) });
  if ('max_sales' in v) out.push({ label: 'Sales', text: salesWords(v.max_sales) });
  if ('consent_days' in v) out.push({ label: 'Consent', text: consentWords(v.consent_days) });
  if ('reoffer' in v) out.push({ label: v.reoffer_source === 'operator' ? 'Second chances (set by the operator)' : 'Second chances', text: reofferWords(v.reoffer, reader) });
  return out;
}

/** The campaigns of `vertical` with a re-offer policy of their own (none included), by name. */
export function overridesOf(campaigns: Rec[], vertical: string): Rec[] {
  return campaigns.filter((c) => c.vertical === vertical && c.reoffer != null).sort((a, b) => String(a.name).localeCompare(String(b.name)));
}

const readerOf = (ctx: Ctx): Reader => (isOperator(ctx.user) ? 'operator' : ctx.user.account === 'seller' ? 'seller' : 'buyer');
const verticalPath = (name: string) => `/settings/verticals/${encodeURIComponent(name)}`;
const doc = (path: string) => h('code', {}, path);

/** Whether a buyer's account takes aged leads, and at what price, from its own account
 *  (`accepts_aged`, `pricing.aged_price` of GET /v1/account). */
export function agedWords(account: Rec | null): string {
  if (!account) return '';
  if (!account.accepts_aged) return 'Your account takes no aged leads: the operator chooses whether it does.';
  const price = account.pricing?.aged_price;
  return price != null ? `Your account takes aged leads, at ${money(Number(price))} each.` : 'Your account takes aged leads, at the aged bid you answer.';
}

// Where the rules come from, as each reader needs it (a buyer: whether it takes aged leads).
function source(reader: Reader, account: Rec | null): HTMLElement {
  if (reader === 'operator') {
    return h(
      'p',
      { class: 'muted', id: 'verticals-source' },
      'Set in the ',
      h('code', {}, 'LEADFLOW_VERTICALS'),
      ' file and read when leadflow starts: a change takes effect at the next restart of every process, but for second chances, which you may change on each vertical\'s page (',
      doc('docs/configuration.md'),
      ', ',
      doc('docs/api.md'),
      ' "The lead body and verticals", ',
      doc('docs/reoffers.md'),
      '). A campaign may replace its vertical\'s second chances with its own (',
      link('/campaigns', 'Campaigns'),
      ', its form\'s "Second chances").',
    );
  }
  if (reader === 'seller') return h('p', { class: 'muted', id: 'verticals-source' }, 'The operator sets these. A lead nobody buys live may still be sold later where its vertical (or your campaign) offers it again.');
  return h('p', { class: 'muted', id: 'verticals-source' }, `The verticals you buy, as the operator set them. ${agedWords(account)}`.trim());
}

// A buyer's own account, for whether it takes aged leads; null for another reader, or when it
// cannot be read (the page still shows the verticals).
async function accountOf(reader: Reader): Promise<Rec | null> {
  if (reader !== 'buyer') return null;
  return get<{ data: Rec }>('/v1/account').then((r) => r.data, () => null);
}

// The campaigns' own policies the reader may read (the operator every one, a seller its own);
// none for a buyer, or where the server lists campaigns to the operator only.
async function campaignsOf(reader: Reader): Promise<Rec[] | null> {
  if (reader === 'buyer') return null;
  try {
    return (await get<{ data: Rec[] }>('/v1/campaigns')).data;
  } catch (e) {
    if (reader === 'seller' && e instanceof ApiError && e.status === 403) return null;
    throw e;
  }
}

/** A campaign's own policy beside its vertical: its delays, or "not offered again". */
export function overrideWords(r: Rec | null | undefined): string {
  return (r?.delays_seconds ?? []).length ? reofferText(r) : 'not offered again';
}

/** The heading of the campaigns with their own policy: every seller's for the operator, the
 *  seller's own for a seller. */
export const overridesTitle = (reader: Reader, short: boolean) => (short ? (reader === 'seller' ? 'Your campaign overrides' : 'Campaign overrides') : reader === 'seller' ? 'Your campaigns with their own second chances' : 'Campaigns with their own second chances');

function overridesList(own: Rec[]): Child {
  if (!own.length) return h('span', { class: 'muted' }, 'none');
  return h('ul', { class: 'change-fields' }, own.map((c) => h('li', {}, link(`/campaigns/${encodeURIComponent(c.campaign_id)}/specification`, String(c.name), { title: c.campaign_id }), `: ${overrideWords(c.reoffer)}`)));
}

const rulesList = (rules: Rule[]) => h('ul', { class: 'change-fields' }, rules.map((r) => h('li', {}, h('strong', {}, `${r.label}: `), r.text)));

export async function verticalsPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const reader = readerOf(ctx);
  const [verticals, campaigns, account] = await Promise.all([get<{ data: Rec[] }>('/v1/verticals').then((r) => r.data), campaignsOf(reader), accountOf(reader)]);
  const headers = ['Vertical', 'Fields', 'Rules'];
  if (campaigns) headers.push(overridesTitle(reader, true));
  root.append(
    h('h1', {}, 'Verticals'),
    source(reader, account),
    table(
      headers,
      verticals.map((v) => {
        const row: Child[] = [link(verticalPath(v.vertical), v.vertical), fieldsWords(v.fields), rulesList(verticalRules(v, reader))];
        if (campaigns) row.push(overridesList(overridesOf(campaigns, v.vertical)));
        return row;
      }),
      counted(verticals.length, 'vertical'),
      reader === 'buyer' ? 'Your account buys no vertical yet: the operator chooses them.' : 'No vertical.',
      'vertical-list',
    ),
  );
}

export async function verticalPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const reader = readerOf(ctx);
  const name = ctx.params.name;
  let v: Rec;
  try {
    v = (await get<{ data: Rec }>(`/v1/verticals/${encodeURIComponent(name)}`)).data;
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404) throw e;
    root.append(h('h1', {}, 'No such vertical'), h('p', {}, `There is no vertical "${name}" here${reader === 'buyer' ? ' that your account buys' : ''}. `, link('/settings/verticals', 'All verticals')));
    return;
  }
  const [campaigns, account] = await Promise.all([campaignsOf(reader), accountOf(reader)]);
  const facts: Rule[] = [{ label: 'Fields', text: fieldsWords(v.fields) }, ...verticalRules(v, reader)];
  root.append(
    h('p', {}, link('/settings/verticals', '← All verticals')),
    h('h1', {}, `Vertical ${v.vertical}`),
    source(reader, account),
    h('section', { class: 'card', 'aria-label': 'Rules' }, h('dl', { class: 'props', id: 'vertical-rules' }, facts.flatMap((f) => [h('dt', {}, f.label), h('dd', {}, f.text)]))),
  );
  // The operator's alone: the vertical's second chances, set or back to the file's.
  if (reader === 'operator') root.append(verticalReofferCard(v, () => ctx.go(location.pathname)));
  if (campaigns) {
    const title = overridesTitle(reader, false);
    root.append(h('section', { class: 'card', 'aria-label': title, id: 'vertical-overrides' }, h('h2', {}, title), overridesList(overridesOf(campaigns, v.vertical))));
  }
  root.append(
    h('h2', {}, 'Fields'),
    table(
      ['Field', 'Type', 'Required', 'A valid value', 'What it is'],
      (v.fields ?? []).map((f: Rec) => [h('span', { class: 'mono' }, f.name), f.type, f.required ? 'yes' : 'no', fieldRule(f) || '—', f.description || '—']),
      `Fields of ${v.vertical}`,
      'No field of its own: a lead of this vertical holds the standard fields only.',
    ),
  );
}
