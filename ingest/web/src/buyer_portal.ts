// What a buyer's own pages show of its account (GET /v1/account), its purchase's return window
// and the lead export: pure, unit-tested without a browser. The API decides; these only word it.
import { count, dateTime, money, percent } from './format';

/** One cap or budget of GET /v1/account's `limits`. */
export interface Limit {
  period: string;
  kind: 'cap' | 'budget';
  limit: number;
  used: number;
  since: string;
  resets_at: string;
}

/** The `return_window` of a buyer's lead view. */
export interface ReturnWindow {
  days: number;
  ends_at: string | null;
  returnable: boolean;
  standing: 'open' | 'no_returns' | 'window_ended' | 'returned';
  reasons: string[];
}

/** A cap or budget as a line: "Daily cap", "12 of 100 leads", its share used (0-1, capped at 1)
 *  and when it starts again. */
export function limitLine(l: Limit): { label: string; text: string; share: number; resets: string } {
  const period = l.period.charAt(0).toUpperCase() + l.period.slice(1);
  const label = `${period} ${l.kind}`;
  const text = l.kind === 'budget' ? `${money(l.used)} of ${money(l.limit)}` : `${count(l.used)} of ${count(l.limit)} leads`;
  const share = l.limit > 0 ? Math.min(1, Math.max(0, l.used / l.limit)) : 1;
  return { label, text, share, resets: `resets ${dateTime(l.resets_at)}` };
}

/** A buyer's rates from its performance totals: of its pings, the share it bid on; of its bids,
 *  the share it won (was posted); of its posts, the share it accepted. */
export function buyerRates(totals: Record<string, unknown>): [string, string][] {
  const n = (k: string) => (typeof totals[k] === 'number' ? (totals[k] as number) : 0);
  const rate = (a: number, b: number) => (b > 0 ? percent(a / b) : '—');
  return [
    ['Pings', count(n('pinged'))],
    ['Bid rate', rate(n('bids'), n('pinged'))],
    ['Win rate', rate(n('won'), n('bids'))],
    ['Accepted', rate(n('delivered'), n('won'))],
  ];
}

/** What the lead page says of returning the lead before asking. */
export function returnStanding(w: ReturnWindow): string {
  switch (w.standing) {
    case 'open':
      return `You can return this lead until ${dateTime(w.ends_at)} (a ${w.days}-day window).`;
    case 'no_returns':
      return 'Your account takes no returns (its return window is 0 days): ask the operator if a lead is bad.';
    case 'window_ended':
      return `The return window ended on ${dateTime(w.ends_at)}: this lead can no longer be returned.`;
    default:
      return 'You returned this lead.';
  }
}

/** A refused return, in words: the window's end, when it was returned before, or the API's own. */
export function returnRefusal(status: number, detail: string, body: Record<string, any> | null): string {
  if (status === 409 && body?.return?.returned_at) return `You already returned this lead on ${dateTime(body.return.returned_at)}.`;
  if (status === 422 && /window 0/.test(detail)) return 'Your account takes no returns (its return window is 0 days): ask the operator.';
  const ended = /ended at (\S+)/.exec(detail);
  if (status === 422 && ended) return `The return window ended on ${dateTime(ended[1])}: this lead can no longer be returned.`;
  return detail || `The return was refused (HTTP ${status}).`;
}

/** A reason code as a person reads it ("invalid_phone" → "Invalid phone"). */
export function reasonLabel(code: string): string {
  const words = code.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The fields of a return form that are wrong before asking: `other` needs a note. */
export function returnFormError(reason: string, note: string): { field: string; message: string } | null {
  if (!reason) return { field: 'reason', message: 'Choose a reason' };
  if (reason === 'other' && !note.trim()) return { field: 'note', message: 'Say why: a return for "other" needs a note' };
  return null;
}

/** The Leads page's "Download CSV" link: GET /v1/leads?format=csv with the page's filters (not
 *  its page: the export starts from the newest), and `tz` where a day is named. */
export function csvHref(search: URLSearchParams, tz: string): string {
  const q = new URLSearchParams();
  for (const [k, v] of search) if (k !== 'cursor' && k !== 'limit' && v.trim() !== '') q.set(k, v.trim());
  if (q.get('created_from') || q.get('created_to')) q.set('tz', tz);
  q.set('format', 'csv');
  return `/v1/leads?${q}`;
}

/** The Leads page's title: a buyer's leads are its purchases. */
export function leadsTitle(account: string): string {
  return account === 'buyer' ? 'Purchases' : 'Leads';
}
