// The operator's ledger journal (GET /v1/ledger; docs/money.md, "The ledger's journal"): the
// page's address as the API's query, the same for its CSV, and each entry's words. Pure:
// unit-tested without a browser.
import { query } from './api';

/** One entry of GET /v1/ledger (docs/api.md). */
export interface LedgerEntry {
  entry_id: number;
  kind: 'sale' | 'return';
  lead_id: string;
  buyer_id: string;
  seller_id: string;
  campaign_id: string;
  currency: string;
  at: string;
  revenue: number;
  payout: number;
  margin: number;
}

/** The filters the page keeps in its address, as the API names them. */
export const LEDGER_FILTERS = ['from', 'to', 'buyer_id', 'seller_id', 'kind'] as const;

/** The kinds an entry can be, as the filter offers them. */
export const LEDGER_KINDS: [string, string][] = [['', 'any'], ['sale', 'Sales'], ['return', 'Returns']];

/** GET /v1/ledger's path for the page's address `s`: its filters and cursor (From and To are
 *  whole days in the user's zone `tz`, sent with them); the CSV holds the same filters from the
 *  first entry (every page of them, as the API cuts downloads). */
export function ledgerPath(s: URLSearchParams, tz: string, csv = false): string {
  const params: Record<string, string> = {};
  for (const n of LEDGER_FILTERS) params[n] = s.get(n) ?? '';
  if (params.from || params.to) params.tz = tz;
  if (csv) params.format = 'csv';
  else {
    params.limit = s.get('limit') ?? '50';
    params.cursor = s.get('cursor') ?? '';
  }
  return `/v1/ledger${query(params)}`;
}

/** The page's own address for a choice of filters (no cursor: a new choice starts again). */
export function ledgerPagePath(filters: Record<string, string>): string {
  const params: Record<string, string> = {};
  for (const n of LEDGER_FILTERS) params[n] = filters[n] ?? '';
  return `/ledger${query(params)}`;
}

/** What an entry is, in words. */
export function entryKind(e: Pick<LedgerEntry, 'kind'>): string {
  return e.kind === 'return' ? 'Return' : 'Sale';
}

/** Whether the page's address holds any filter. */
export function filtered(s: URLSearchParams): boolean {
  return LEDGER_FILTERS.some((n) => s.get(n));
}
