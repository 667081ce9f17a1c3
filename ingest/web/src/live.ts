// The live feed's logic (GET /v1/live, Server-Sent Events): its events, the list the overview
// keeps of them, how a line reads, when to reconnect and when to read the totals again. Pure:
// unit-tested without a browser; pages/live_feed.ts draws it.
import { money } from './format';
import { Account, Lead, personLine, sellerLabel } from './lead_view';
import { Names } from './names';

/** One event of the stream: a lead received (recorded, not decided) or decided, as this reader
 *  may see it (a row of GET /v1/leads). */
export interface LiveEvent {
  kind: 'received' | 'decided';
  lead: Lead;
}

/** The event in an SSE `data:` line; null for anything else. */
export function parseLiveEvent(data: string): LiveEvent | null {
  try {
    const v = JSON.parse(data);
    if ((v?.kind === 'received' || v?.kind === 'decided') && typeof v.lead?.lead_id === 'string') return v as LiveEvent;
  } catch {
    /* not an event */
  }
  return null;
}

/** The feed's list, newest first, at most `cap` long: a lead's decision replaces the line of its
 *  arrival and moves it to the top, so each lead has one line. */
export function addEvent(list: LiveEvent[], ev: LiveEvent, cap = 50): LiveEvent[] {
  const rest = list.filter((e) => e.lead.lead_id !== ev.lead.lead_id);
  return [ev, ...rest].slice(0, cap);
}

/** What a line says of a lead's state: "Received", or its status with the money this reader
 *  sees (a seller its payout, a buyer its price, the operator the price). */
export function stateText(ev: LiveEvent, account: Account): string {
  if (ev.kind === 'received') return 'Received';
  const d = ev.lead.distribution ?? {};
  const status = String(d.delivery_status ?? ev.lead.status ?? 'decided');
  const words: Record<string, string> = { delivered: 'Sold', unsold: 'Unsold', failed: 'Failed', duplicate: 'Duplicate', rejected: 'Rejected', returned: 'Returned', pending: 'Received' };
  const word = words[status] ?? status;
  const amount = account === 'seller' ? d.payout : d.price;
  return typeof amount === 'number' && status === 'delivered' ? `${word}, ${money(amount, d.currency)}${account === 'seller' ? ' payout' : ''}` : word;
}

/** Who the line names besides the person, as the rest of the console names them: the operator the
 *  seller and buyer, a seller the campaign, a buyer the seller's source. Ids this reader was
 *  given, named from `names` where it may read them. */
export function partiesText(l: Lead, account: Account, names: Names): string {
  const name = (id: unknown) => (typeof id === 'string' && id ? names.get(id) ?? id : null);
  if (account === 'seller') return name(l.campaign_id) ?? '';
  if (account === 'buyer') return sellerLabel(l) ?? '';
  const seller = name(l.seller_id);
  const buyer = name(l.distribution?.buyer_id);
  return [seller, buyer].filter(Boolean).join(' → ');
}

/** The person of a line: a name, else the contact, else the lead id. */
export function personText(l: Lead): string {
  const p = personLine(l);
  return p.name || p.contact || String(l.lead_id);
}

/** Seconds before reconnecting after the `attempt`-th failure in a row (1, 2, 4 ... 30). */
export function retryDelay(attempt: number): number {
  return Math.min(30, 2 ** Math.max(0, attempt - 1));
}

/** The connection's state as the feed shows it (role=status): words, not a blinking dot. */
export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'resumed';
export function stateLabel(s: LiveState, retryIn = 0): string {
  if (s === 'live') return 'Live: leads appear here as they arrive';
  // The feed could not send what changed while away (too much, or an id it does not know).
  if (s === 'resumed') return 'Live from now: too much changed while this page was away to show it here; the leads list has every lead';
  if (s === 'connecting') return 'Connecting…';
  return retryIn > 0 ? `Reconnecting in ${retryIn} s…` : 'Reconnecting…';
}

/** Calls `run` at most once every `ms` however often it is asked, and once more after the last
 *  ask of a burst, so the figures end on the latest state. `now` and `later` are the clock's. */
export function throttle(run: () => void, ms: number, now: () => number = Date.now, later: (f: () => void, ms: number) => unknown = setTimeout): () => void {
  let last = -Infinity;
  let waiting = false;
  return () => {
    if (waiting) return;
    const left = last + ms - now();
    if (left <= 0) {
      last = now();
      run();
      return;
    }
    waiting = true;
    later(() => {
      waiting = false;
      last = now();
      run();
    }, left);
  };
}
