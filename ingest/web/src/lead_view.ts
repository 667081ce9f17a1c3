// What the lead list and the lead page show of a lead: whatever the API gave this reader, and no
// column or line for a field it never gets (a seller gets no buyer, a buyer no seller or payout;
// docs/visibility.md). Pure: unit-tested without a browser.
import { dateTime, duration, money } from './format';

export type Lead = Record<string, any>;
export type Account = 'operator' | 'seller' | 'buyer';
type Pair = [string, string | null];

const has = (o: unknown, k: string) => o !== null && typeof o === 'object' && k in (o as object);
const text = (v: unknown): string | null => (v === null || v === undefined || v === '' ? null : String(v));
const amount = (v: unknown, currency?: string) => (typeof v === 'number' ? money(v, currency) : null);

/** Who sold the lead, as this reader may know it: a seller id, a name, or a buyer's source code. */
export function sellerLabel(l: Lead): string | null {
  if (has(l, 'seller_name') && l.seller_name) return `${l.seller_name} (${l.seller_id ?? l.source_code})`;
  if (has(l, 'seller_id')) return text(l.seller_id);
  return text(l.source_code);
}

/** The list's columns for a reader, after the lead id. */
export function leadColumns(account: Account): string[] {
  const common = ['Received', 'Status', 'Vertical', 'Source'];
  if (account === 'seller') return [...common, 'Campaign', 'Your payout'];
  if (account === 'buyer') return [...common, 'Seller source', 'Price'];
  return [...common, 'Seller', 'Buyer', 'Price'];
}

/** One list row's cells, matching leadColumns. */
export function leadCells(l: Lead, account: Account): string[] {
  const d = l.distribution ?? {};
  const common = [dateTime(l.created_at), String(l.status ?? '—'), String(l.vertical ?? '—'), text(l.source) ?? '—'];
  if (account === 'seller') return [...common, text(l.campaign_id) ?? '—', amount(d.payout, d.currency) ?? '—'];
  if (account === 'buyer') return [...common, sellerLabel(l) ?? '—', amount(d.price, d.currency) ?? '—'];
  return [...common, text(l.seller_id) ?? '—', text(d.buyer_id) ?? '—', amount(d.price, d.currency) ?? '—'];
}

/** The lead page's "Distribution" card. */
export function distributionPairs(l: Lead, account: Account): Pair[] {
  const d = l.distribution ?? {};
  const pairs: Pair[] = [['Received', dateTime(l.created_at)], ['Vertical', text(l.vertical)], ['Source', text(l.source)]];
  if (has(l, 'seller_id') || has(l, 'source_code')) pairs.push([account === 'buyer' ? 'Seller source' : 'Seller', sellerLabel(l)]);
  if (has(l, 'campaign_id')) pairs.push(['Campaign', text(l.campaign_id)]);
  pairs.push(['Status', text(d.delivery_status)]);
  // A seller's distribution names buyer_id as null, withheld (docs/visibility.md): no line.
  if (has(d, 'buyer_id') && account !== 'seller') pairs.push(['Buyer', text(d.buyer_id)]);
  if (has(d, 'buyer_lead_id')) pairs.push(['Buyer reference', text(d.buyer_lead_id)]);
  // A seller's "price" is its payout: shown once, as the payout.
  if (has(d, 'price') && account !== 'seller') pairs.push([account === 'buyer' ? 'Your price' : 'Price', amount(d.price, d.currency)]);
  if (has(d, 'payout')) pairs.push([account === 'seller' ? 'Your payout' : 'Seller payout', amount(d.payout, d.currency)]);
  pairs.push(['Decided', d.decided_at ? dateTime(d.decided_at) : null]);
  // A seller reads its reason on the lead page as "Why it was not sold" (src/unsold.ts).
  if (has(d, 'reason') && account !== 'seller') pairs.push(['Reason', text(d.reason)]);
  return pairs;
}

/** The attempts table (operator: every buyer; buyer: its own), or null when the API gave none. */
export function attemptsTable(l: Lead): { head: string[]; rows: string[][] } | null {
  if (!Array.isArray(l.attempts)) return null;
  return {
    head: ['Started', 'Offer', 'Buyer', 'Kind', 'Tier', 'Outcome', 'Bid', 'Duration', 'HTTP', 'Reason'],
    rows: l.attempts.map((a: Lead) => [dateTime(a.started_at), offerLabel(a.reoffer), text(a.buyer_id) ?? '—', String(a.kind), text(a.tier) ?? '—', String(a.outcome), amount(a.bid) ?? '—', duration(a.duration_ms), text(a.http_status) ?? '—', text(a.reason) ?? '—']),
  };
}

/** Which offer an attempt belongs to: the live auction, or the nth re-offer as an aged lead. */
export function offerLabel(reoffer: unknown): string {
  return typeof reoffer === 'number' && reoffer > 0 ? `Re-offer ${reoffer}` : 'Live';
}

/** A seller's summary of when its lead was offered, or null. */
export function offerPairs(l: Lead): Pair[] | null {
  const o = l.offers;
  if (!o || typeof o !== 'object') return null;
  const pairs: Pair[] = [['First offered', o.first_offered_at ? dateTime(o.first_offered_at) : null], ['Last offered', o.last_offered_at ? dateTime(o.last_offered_at) : null], ['Pings', text(o.pings)], ['Posts', text(o.posts)]];
  if (typeof o.reoffers === 'number' && o.reoffers > 0) pairs.push(['Offered again', text(o.reoffers)]);
  return pairs;
}

/** The returns table: its columns are the money this reader may see. */
export function returnsTable(l: Lead, account: Account): { head: string[]; rows: string[][] } | null {
  if (!Array.isArray(l.returns) || l.returns.length === 0) return null;
  const withPrice = account !== 'seller';
  const withPayout = account !== 'buyer';
  const head = ['Returned', 'Reason', ...(withPrice ? ['Price'] : []), ...(withPayout ? [account === 'seller' ? 'Payout reversed' : 'Seller payout'] : [])];
  const rows = l.returns.map((r: Lead) => [dateTime(r.returned_at), String(r.reason), ...(withPrice ? [amount(r.price, r.currency) ?? '—'] : []), ...(withPayout ? [amount(r.payout, r.currency) ?? '—'] : [])]);
  return { head, rows };
}

/** The person in one line of the list, as far as this reader was given it: the name, and the
 *  e-mail and phone as contact. */
/** The person as the reader may see them (the API leaves out what it may not): who, where they
 *  came from, their consent and the vertical's custom fields, one row each; a field the lead
 *  does not hold is left out, but name, e-mail and phone always have a row. */
export function personPairs(l: Lead): Pair[] {
  const pairs: Pair[] = [
    ['Name', text(`${l.first_name ?? ''} ${l.last_name ?? ''}`.trim())],
    ['E-mail', text(l.email)],
    ['Phone', text(l.phone)],
  ];
  const optional: [string, unknown][] = [
    ['ZIP', l.zip_code],
    ['State', l.state],
    ['IP address', l.ip_address],
    ['User agent', l.user_agent],
    ['Landing page', l.landing_page],
    ['TCPA consent', typeof l.tcpa_consent === 'boolean' ? (l.tcpa_consent ? 'yes' : 'no') : null],
    ['Consent text', l.tcpa_consent_text],
    ['TrustedForm certificate', l.trustedform_cert_url],
    ['Jornaya LeadiD', l.jornaya_leadid],
  ];
  for (const [label, v] of optional) if (text(v) !== null) pairs.push([label, text(v)]);
  const custom = l.custom_fields;
  if (custom && typeof custom === 'object')
    for (const [k, v] of Object.entries(custom)) pairs.push([k, text(typeof v === 'object' && v !== null ? JSON.stringify(v) : v)]);
  return pairs;
}

export function personLine(l: Lead): { name: string; contact: string } {
  const name = [text(l.first_name), text(l.last_name)].filter(Boolean).join(' ');
  const contact = [text(l.email), text(l.phone)].filter(Boolean).join(' · ');
  return { name, contact };
}

/** The Leads page finding `text` (a lead id, an e-mail or a phone: GET /v1/leads?q=), from the
 *  first page, keeping the filters of `current`; a blank text drops the search. */
export function searchPath(current: URLSearchParams, text: string): string {
  const next = new URLSearchParams(current);
  next.delete('cursor');
  const q = text.trim();
  if (q) next.set('q', q);
  else next.delete('q');
  const s = next.toString();
  return s ? `/leads?${s}` : '/leads';
}
