// The seller's payouts (pages/payouts.ts): what it reads of the revenue report (docs/visibility.md,
// "Reports": its payout, leads sold and returns, never revenue or margin), per day and per
// campaign over whole days of its zone. Pure: unit-tested without a browser.
import { count, money } from './format';
import { MONEY_METRICS, Row, ReportParams, csvName, metricLabel, metricsFor, reportPath } from './report';
import { Range } from './zone';

/** The figures of a payout row, in the table's order: what a seller may read of the revenue
 *  report, the payout (net of returns) last. */
export function payoutColumns(): string[] {
  const seller = metricsFor('revenue', 'seller');
  return [...seller.filter((m) => m !== 'payout'), ...(seller.includes('payout') ? ['payout'] : [])];
}

// The seller's words for its figures. The aged sales' (docs/reoffers.md) follow the same order
// as the live ones: what they paid, what their returns reversed, and the net.
const LABELS: Record<string, string> = {
  leads_sold: 'Leads sold',
  returns: 'Returned',
  returned_payout: 'Payout reversed',
  payout: 'Payout (net)',
  aged_sales: 'Sold aged',
  aged_payout: 'Payout of aged sales',
  aged_returns: 'Aged sales returned',
  aged_returned_payout: 'Aged payout reversed',
  aged_net_payout: 'Aged payout (net)',
};

/** A payout figure's label for a seller. */
export function payoutLabel(metric: string): string {
  return LABELS[metric] ?? metricLabel(metric, 'seller');
}

/** A payout figure as the page shows it: money in the report's currency, counts as counts;
 *  "—" when the row has none. */
export function payoutFigure(metric: string, v: unknown, currency: string): string {
  if (v === null || v === undefined) return '—';
  return MONEY_METRICS.has(metric) ? money(Number(v), currency) : count(Number(v));
}

/** The report asked for one grouping of the range, as JSON and as CSV, with the CSV's name. */
export function payoutReport(r: Range, tz: string, group: 'day' | 'campaign'): { path: string; csv: string; file: string } {
  const p: ReportParams = { from: r.from, to: r.to, group_by: group, tz };
  return { path: reportPath('revenue', p), csv: reportPath('revenue', p, true), file: csvName('revenue', r.from, r.to) };
}

export interface CampaignPayout {
  id: string;
  name: string | null;
  figures: Row;
}

/** The per-campaign rows, largest payout first, each named when the seller may read the name;
 *  a row of leads posted with an API key (no campaign) keeps a null id. */
export function campaignPayouts(rows: Row[], names: Map<string, string>): CampaignPayout[] {
  return rows
    .map((r) => {
      const id = typeof r.campaign_id === 'string' ? r.campaign_id : '';
      return { id, name: id ? (names.get(id) ?? null) : null, figures: r };
    })
    .sort((a, b) => Number(b.figures.payout ?? 0) - Number(a.figures.payout ?? 0));
}

/** A chart tick's amount, short enough for the chart's margin on a phone: the currency goes in
 *  the heading ("15", "2.5", "1.5k"). */
export function chartAmount(v: number): string {
  if (Math.abs(v) >= 1000) return `${Number((v / 1000).toFixed(1))}k`;
  return String(Number(v.toFixed(2)));
}
