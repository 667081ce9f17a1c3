// The buyer form's fields (every field of the buyer contract) and the body they make.
// Pure: unit-tested without a browser.
import { splitList } from './format';

export type Kind = 'text' | 'number' | 'list' | 'json' | 'select' | 'url';
export interface BuyerField {
  name: string; // the JSON path, as the API names it in its errors
  label: string;
  kind: Kind;
  options?: string[];
  hint?: string;
  group: string;
  /** A select of 'false' / 'true' sent as a JSON boolean. */
  boolean?: boolean;
}

export const BUYER_FIELDS: BuyerField[] = [
  { group: 'Buyer', name: 'name', label: 'Name', kind: 'text' },
  { group: 'Buyer', name: 'status', label: 'Status', kind: 'select', options: ['active', 'paused'] },
  { group: 'Buyer', name: 'verticals', label: 'Verticals', kind: 'list', hint: 'comma-separated, e.g. auto_insurance, solar' },
  { group: 'Buyer', name: 'tier', label: 'Tier', kind: 'number' },
  { group: 'Buyer', name: 'priority', label: 'Priority', kind: 'number' },
  { group: 'Buyer', name: 'weight', label: 'Weight', kind: 'number' },
  { group: 'Buyer', name: 'max_concurrency', label: 'Max concurrency', kind: 'number' },
  { group: 'Buyer', name: 'duplicate_lookback_days', label: 'Duplicate lookback (days)', kind: 'number' },
  { group: 'Buyer', name: 'return_window_days', label: 'Return window (days)', kind: 'number' },
  { group: 'Buyer', name: 'max_return_rate', label: 'Max return rate', kind: 'number', hint: 'a fraction, e.g. 0.2' },
  { group: 'Buyer', name: 'visibility.seller_names', label: 'Show seller names', kind: 'select', options: ['false', 'true'], boolean: true, hint: 'false: the buyer sees an opaque source code per seller; never the payout' },
  { group: 'Buyer', name: 'self_service.caps', label: 'Buyer may edit its caps', kind: 'select', options: ['false', 'true'], boolean: true, hint: 'true: the buyer changes its own caps and budgets on its Buying page' },
  { group: 'Buyer', name: 'self_service.filters', label: 'Buyer may edit its filters', kind: 'select', options: ['false', 'true'], boolean: true, hint: 'true: the buyer changes its own filters on its Buying page' },
  { group: 'Delivery', name: 'delivery.mode', label: 'Mode', kind: 'select', options: ['ping_post', 'direct_post'] },
  { group: 'Delivery', name: 'delivery.ping_url', label: 'Ping URL', kind: 'url', hint: 'ping_post only' },
  { group: 'Delivery', name: 'delivery.post_url', label: 'Post URL', kind: 'url' },
  { group: 'Delivery', name: 'delivery.timeout_ms', label: 'Timeout (ms)', kind: 'number' },
  { group: 'Delivery', name: 'delivery.headers', label: 'Headers (JSON object)', kind: 'json', hint: 'secret values read back masked; leave a mask as it is to keep the value' },
  { group: 'Delivery', name: 'delivery.mapping', label: 'Mapping (JSON)', kind: 'json' },
  { group: 'Pricing', name: 'pricing.model', label: 'Model', kind: 'select', options: ['bid', 'fixed'] },
  { group: 'Pricing', name: 'pricing.price', label: 'Fixed price', kind: 'number' },
  { group: 'Pricing', name: 'pricing.min_bid', label: 'Minimum bid', kind: 'number' },
  { group: 'Pricing', name: 'pricing.shared_price', label: 'Shared price', kind: 'number' },
  { group: 'Pricing', name: 'accepts_aged', label: 'Buys aged leads', kind: 'select', options: ['false', 'true'], boolean: true, hint: 'true: offered leads nobody bought live, again after the vertical\'s delays' },
  { group: 'Pricing', name: 'pricing.aged_price', label: 'Aged price', kind: 'number', hint: 'its price for an aged lead; empty: its aged_bid in the ping answer' },
  { group: 'Filters', name: 'filters.states', label: 'States', kind: 'list', hint: 'comma-separated, e.g. CA, TX' },
  { group: 'Filters', name: 'filters.exclude_states', label: 'Excluded states', kind: 'list' },
  { group: 'Filters', name: 'filters.zip_prefixes', label: 'ZIP prefixes', kind: 'list' },
  { group: 'Filters', name: 'filters.sources', label: 'Sources', kind: 'list' },
  { group: 'Filters', name: 'filters.custom', label: 'Custom rules (JSON array)', kind: 'json', hint: '[{"field": "age", "op": "gte", "value": 18}]' },
  { group: 'Schedule', name: 'schedule', label: 'Schedule (JSON)', kind: 'json', hint: '{"timezone": "America/New_York", "hours": {...}}' },
  { group: 'Caps', name: 'caps.hourly', label: 'Hourly', kind: 'number' },
  { group: 'Caps', name: 'caps.daily', label: 'Daily', kind: 'number' },
  { group: 'Caps', name: 'caps.weekly', label: 'Weekly', kind: 'number' },
  { group: 'Caps', name: 'caps.monthly', label: 'Monthly', kind: 'number' },
  { group: 'Caps', name: 'caps.daily_budget', label: 'Daily budget', kind: 'number' },
  { group: 'Caps', name: 'caps.monthly_budget', label: 'Monthly budget', kind: 'number' },
];

export function getPath(obj: unknown, path: string): unknown {
  let at: unknown = obj;
  for (const k of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[k];
  }
  return at;
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = obj;
  for (const k of keys.slice(0, -1)) {
    if (typeof at[k] !== 'object' || at[k] === null) at[k] = {};
    at = at[k] as Record<string, unknown>;
  }
  at[keys[keys.length - 1]] = value;
}

/** The text a field shows for a buyer's value ("" when unset). */
export function toText(f: BuyerField, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (f.kind === 'list') return Array.isArray(value) ? value.join(', ') : String(value);
  if (f.kind === 'json') {
    if ((Array.isArray(value) && !value.length) || (typeof value === 'object' && !Array.isArray(value) && !Object.keys(value as object).length)) return '';
    return JSON.stringify(value, null, 1);
  }
  return String(value);
}

export interface Built {
  body: Record<string, unknown>;
  errors: { field: string; message: string }[];
}

/** Groups a PUT replaces whole: emptied on an edit, they are sent as null, which clears them. */
const CLEARABLE_GROUPS = ['filters', 'schedule', 'caps'];

/** The buyer body from the fields' texts: empty fields are left out (the API's default, or on
 *  an edit the value kept), but for a group emptied on an edit (`editing`), sent as null; what
 *  cannot be read is an error on its field, before any request. */
export function buildBuyerBody(values: Record<string, string>, editing = false): Built {
  const body: Record<string, unknown> = {};
  const errors: { field: string; message: string }[] = [];
  for (const f of BUYER_FIELDS) {
    const text = (values[f.name] ?? '').trim();
    if (text === '') continue;
    switch (f.kind) {
      case 'number': {
        const n = Number(text);
        if (!Number.isFinite(n)) errors.push({ field: f.name, message: 'must be a number' });
        else setPath(body, f.name, n);
        break;
      }
      case 'list':
        setPath(body, f.name, splitList(text));
        break;
      case 'json':
        try {
          setPath(body, f.name, JSON.parse(text));
        } catch {
          errors.push({ field: f.name, message: 'must be valid JSON' });
        }
        break;
      default:
        setPath(body, f.name, f.boolean ? text === 'true' : text);
    }
  }
  if (editing) for (const group of CLEARABLE_GROUPS) if (!(group in body)) body[group] = null;
  return { body, errors };
}
