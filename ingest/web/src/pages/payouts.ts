// A seller's payouts: per day and per campaign over a range of its whole days, from the revenue
// report it may read (its payout, leads sold, returns; never revenue or margin: the API leaves
// them out of a seller's answer and this page never asks for them), with the CSV of each.
import { get } from '../api';
import { Ctx } from '../app';
import { lineChart } from '../chart';
import { Child, emptyState, h, link, named, table } from '../dom';
import { daysAgo } from '../format';
import { loadNames } from '../names';
import { CampaignPayout, campaignPayouts, chartAmount, payoutColumns, payoutFigure as figure, payoutLabel, payoutReport } from '../payouts';
import { Row, fillDays, series } from '../report';
import { addDays, daysIn, zone } from '../zone';
import { overviewRange, rangePicker, rangeText } from './overview';

interface Report {
  data: { rows: Row[]; totals: Row; currency: string };
}

function csvLink(href: string, file: string, text: string, id: string): HTMLElement {
  return h('a', { href, download: file, class: 'button secondary', id }, text);
}

export async function payoutsPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const tz = zone();
  const today = daysAgo(0);
  const { preset, range } = overviewRange(ctx.search, today);
  const byDay = payoutReport(range, tz, 'day');
  const byCampaign = payoutReport(range, tz, 'campaign');
  root.append(
    h('h1', {}, 'Payouts'),
    h('p', { class: 'muted' }, `What your leads earned ${rangeText(preset, range) === 'today' ? `today, ${today}` : `from ${range.from} to ${range.to}`} (days in ${tz}): your payout net of returns, per day and per campaign, and of it what your leads sold aged (offered again after going unsold) paid, what their returns reversed, and the net.`),
    rangePicker(ctx, preset, range, '/payouts', 'Payouts range'),
  );
  // The chart: the range by day, or the last 7 days when the range is shorter (as the overview).
  const span = daysIn(range.from, range.to) >= 7 ? range : { from: addDays(range.to, -6), to: range.to };
  const [days, campaigns, names] = await Promise.all([get<Report>(payoutReport(span, tz, 'day').path), get<Report>(byCampaign.path), loadNames('seller')]);
  const currency = campaigns.data.currency || 'USD';
  const cols = payoutColumns();
  const totals = campaigns.data.totals ?? {};
  root.append(
    h('div', { class: 'tiles' }, cols.map((c) => h('div', { class: 'tile', id: `payout-${c.replace(/_/g, '-')}` }, h('div', { class: 'tile-label' }, payoutLabel(c)), h('div', { class: 'tile-value' }, figure(c, totals[c] ?? 0, currency))))),
  );
  const points = fillDays(series(days.data.rows, 'day', 'payout'), span.from, span.to);
  const title = `Payout per day (${currency}), ${span.from} to ${span.to}`;
  const none = !days.data.rows.length;
  root.append(
    h(
      'section',
      { class: 'card chart-card', id: 'payouts-by-day' },
      h('h2', {}, span === range ? `Per day (${currency})` : `Per day (${currency}), last 7 days`),
      none ? emptyState('No payout in these days: choose a wider range, or ', link('/get-started', 'post your first lead'), '.') : lineChart(points, title, chartAmount),
      h('p', {}, csvLink(byDay.csv, byDay.file, 'Download per day (CSV)', 'csv-by-day')),
    ),
  );
  const rows: Child[][] = campaignPayouts(campaigns.data.rows, names).map((c: CampaignPayout) => [
    c.id ? named(c.name, c.id) : h('span', { class: 'muted' }, 'Posted with an API key (no campaign)'),
    ...cols.map((m) => figure(m, c.figures[m], currency)),
  ]);
  if (rows.length) rows.push([h('strong', {}, 'Total'), ...cols.map((m) => h('strong', {}, figure(m, (campaigns.data.totals ?? {})[m] ?? 0, currency)))]);
  root.append(
    h(
      'section',
      { class: 'card', id: 'payouts-by-campaign' },
      h('h2', {}, 'Per campaign'),
      table(['Campaign', ...cols.map(payoutLabel)], rows, `Payout per campaign, ${range.from} to ${range.to}`, 'No lead sold in these days.'),
      h('p', {}, csvLink(byCampaign.csv, byCampaign.file, 'Download per campaign (CSV)', 'csv-by-campaign'), ' ', link('/reports?kind=revenue', 'More in the reports')),
    ),
  );
}
