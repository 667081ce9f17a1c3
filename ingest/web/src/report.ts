// Report parameters and rows: what the report pages ask the API and how they read the answer.
import { query } from './api';
import { Point } from './chart';

export type ReportKind = 'performance' | 'revenue' | 'unsold';
export const TIME_GROUPS = ['day', 'hour'];
export const GROUPS = ['day', 'hour', 'buyer', 'vertical', 'source', 'seller', 'campaign'];
/** The unsold report's groupings: every row is also cut by reason. */
export const UNSOLD_GROUPS = ['reason', 'buyer', 'source', 'vertical', 'campaign', 'seller', 'day'];

export function groupsOf(kind: ReportKind): string[] {
  return kind === 'unsold' ? UNSOLD_GROUPS : GROUPS;
}

// What each account may ask and read: the API decides (docs/visibility.md, "Reports") and refuses
// the rest with a 400; the page only offers what it will answer.
export type Account = 'operator' | 'seller' | 'buyer';

/** The reports an account may read: a buyer does not read why leads went unsold. */
export function kindsFor(account: Account): ReportKind[] {
  return account === 'buyer' ? ['performance', 'revenue'] : ['performance', 'revenue', 'unsold'];
}

/** The groupings of a report an account may use: a seller never by buyer; a buyer never by
 *  campaign, and by seller only as its sources' codes. */
export function groupsFor(kind: ReportKind, account: Account): string[] {
  const never = account === 'seller' ? ['buyer'] : account === 'buyer' ? ['campaign', 'reason'] : [];
  return groupsOf(kind).filter((g) => !never.includes(g));
}

/** The filters (query parameters) of the reports page an account may send. */
export function filtersFor(account: Account): string[] {
  if (account === 'operator') return ['vertical', 'source', 'buyer_id', 'campaign_id'];
  if (account === 'seller') return ['vertical', 'source', 'campaign_id'];
  return ['vertical', 'source'];
}

const HIDDEN: Record<Account, string[]> = {
  operator: [],
  // The buyers' money and their answers are theirs; the margin is the operator's.
  seller: ['revenue', 'margin', 'avg_price', 'gross_revenue', 'returned_revenue', 'aged_revenue', 'aged_margin', 'aged_returned_revenue', 'aged_net_revenue', 'aged_net_margin', 'pinged', 'bids', 'won', 'delivered', 'rejected', 'timeouts', 'errors', 'avg_response_ms', 'p95_response_ms'],
  // The sellers' payouts and the margin are not a buyer's; leads' own counts include leads it
  // did not buy.
  buyer: ['payout', 'margin', 'returned_payout', 'aged_payout', 'aged_margin', 'aged_returned_payout', 'aged_net_payout', 'aged_net_margin', 'leads', 'duplicates', 'invalid', 'sold', 'unsold', 'failed'],
};

/** The figures of a report an account reads. */
export function metricsFor(kind: ReportKind, account: Account): string[] {
  return METRICS[kind].filter((m) => !HIDDEN[account].includes(m));
}

/** A figure's name for its reader: a buyer's revenue is what it spent. */
export function metricLabel(metric: string, account: Account): string {
  const buyer: Record<string, string> = { leads_sold: 'leads bought', revenue: 'spend', gross_revenue: 'gross spend', returned_revenue: 'refunded', avg_price: 'avg price', won: 'posts won', aged_sales: 'aged leads bought', aged_revenue: 'aged spend', aged_returned_revenue: 'aged refunded', aged_net_revenue: 'aged net spend' };
  return (account === 'buyer' && buyer[metric]) || metric.replace(/_/g, ' ');
}

/** The label of a grouping for its reader: a buyer's sellers are its sources' codes. */
export function groupLabel(group: string, account: Account): string {
  return account === 'buyer' && group === 'seller' ? 'source code' : group;
}

export interface ReportParams {
  from: string;
  to: string;
  group_by: string;
  tz?: string;
  vertical?: string;
  source?: string;
  buyer_id?: string;
}

export function reportPath(kind: ReportKind, p: ReportParams, csv = false): string {
  return `/v1/reports/${kind}${query({ ...p, format: csv ? 'csv' : undefined })}`;
}

export type Row = Record<string, unknown>;

/** The label of a row for its grouping: the time ("day", "hour") or the group's id. */
export function rowLabel(row: Row, group: string): string {
  // A buyer reads each seller as an opaque source code.
  const keys = group === 'day' || group === 'hour' ? [group, 'period', 'start'] : [`${group}_id`, group, `${group}_name`, ...(group === 'seller' ? ['source_code'] : [])];
  for (const k of keys) {
    const v = row[k];
    if (typeof v === 'string' || typeof v === 'number') return String(v);
  }
  return '(none)';
}

/** The points of one metric, in the API's order for a time grouping, largest first otherwise. */
export function series(rows: Row[], group: string, metric: string): Point[] {
  const points = rows.map((r) => ({ label: rowLabel(r, group), value: Number(r[metric] ?? 0) || 0 }));
  if (!TIME_GROUPS.includes(group)) points.sort((a, b) => b.value - a.value);
  return points;
}

export const METRICS: Record<ReportKind, string[]> = {
  performance: ['leads', 'sold', 'unsold', 'duplicates', 'invalid', 'pinged', 'bids', 'won', 'delivered', 'rejected', 'timeouts', 'errors', 'acceptance_rate', 'avg_response_ms', 'p95_response_ms'],
  revenue: ['leads_sold', 'revenue', 'payout', 'margin', 'avg_price', 'gross_revenue', 'returns', 'returned_revenue', 'returned_payout', 'aged_sales', 'aged_revenue', 'aged_payout', 'aged_margin', 'aged_returns', 'aged_returned_revenue', 'aged_returned_payout', 'aged_net_revenue', 'aged_net_payout', 'aged_net_margin'],
  unsold: ['leads'],
};

/** An unsold row's label: its reason, after its group's value when grouped by more. */
export function unsoldLabel(row: Row, group: string): string {
  const reason = typeof row.reason === 'string' ? row.reason : '(none)';
  return group === 'reason' ? reason : `${rowLabel(row, group)} · ${reason}`;
}

/** The unsold report's points: leads per label, largest first. */
export function unsoldSeries(rows: Row[], group: string): Point[] {
  const sums = new Map<string, number>();
  for (const r of rows) {
    const label = unsoldLabel(r, group);
    sums.set(label, (sums.get(label) ?? 0) + (Number(r.leads ?? 0) || 0));
  }
  return [...sums].map(([label, value]) => ({ label, value })).sort((a, b) => b.value - a.value);
}

export const MONEY_METRICS = new Set(['revenue', 'payout', 'margin', 'avg_price', 'gross_revenue', 'returned_revenue', 'returned_payout', 'aged_revenue', 'aged_payout', 'aged_margin', 'aged_returned_revenue', 'aged_returned_payout', 'aged_net_revenue', 'aged_net_payout', 'aged_net_margin']);

/** Every day from `from` to `to` (YYYY-MM-DD, both included) with the value of its point, or 0:
 *  the API leaves out days with no lead. */
export function fillDays(points: Point[], from: string, to: string): Point[] {
  const byDay = new Map(points.map((p) => [p.label, p.value]));
  const out: Point[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= end && out.length < 400; t += 86_400_000) {
    const day = new Date(t).toISOString().slice(0, 10);
    out.push({ label: day, value: byDay.get(day) ?? 0 });
  }
  return out;
}

/** A report's CSV file name, as the API names it: the report and its days, the last included
 *  ("revenue_2026-11-01_2026-11-27.csv"). */
export function csvName(kind: ReportKind, from: string, to: string): string {
  const safe = (t: string) => t.replace(/[^0-9A-Za-z-]/g, '');
  return `${kind}_${safe(from)}_${safe(to)}.csv`;
}
