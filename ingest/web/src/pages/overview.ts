import { get } from '../api';
import { Ctx } from '../app';
import { lineChart } from '../chart';
import { emptyState, h, link } from '../dom';
import { count, daysAgo, money, percent } from '../format';
import { Account, Row, fillDays, reportPath, series } from '../report';

interface Report {
  data: { rows: Row[]; totals: Row; currency: string };
}

/** A tile of the overview: a figure of today's performance or revenue report. */
export interface Tile {
  id: string;
  label: string;
  report: 'performance' | 'revenue';
  figure: string;
  as: 'count' | 'money' | 'percent';
}

/** What an account's overview shows (docs/visibility.md, "Reports"): each reads its own money — the
 *  operator the buyers' revenue, a seller its payout, a buyer what it spent — and a buyer its
 *  purchases, not the leads sellers sent. */
export function overviewTiles(account: Account): Tile[] {
  const rate: Tile = { id: 'tile-acceptance', label: 'Acceptance rate', report: 'performance', figure: 'acceptance_rate', as: 'percent' };
  if (account === 'buyer')
    return [
      { id: 'tile-bought', label: 'Leads bought', report: 'revenue', figure: 'leads_sold', as: 'count' },
      { id: 'tile-spend', label: 'Spend', report: 'revenue', figure: 'revenue', as: 'money' },
      { ...rate, label: 'Posts accepted' },
    ];
  return [
    { id: 'tile-leads', label: "Today's leads", report: 'performance', figure: 'leads', as: 'count' },
    { id: 'tile-sold', label: 'Sold', report: 'performance', figure: 'sold', as: 'count' },
    account === 'seller'
      ? { id: 'tile-payout', label: 'Payout', report: 'revenue', figure: 'payout', as: 'money' }
      : { id: 'tile-revenue', label: 'Revenue', report: 'revenue', figure: 'revenue', as: 'money' },
    rate,
  ];
}

/** The week's chart: leads per day, or for a buyer the leads it bought per day. */
export function weekChart(account: Account): { report: 'performance' | 'revenue'; figure: string; heading: string; title: string } {
  return account === 'buyer'
    ? { report: 'revenue', figure: 'leads_sold', heading: 'Leads bought, last 7 days', title: 'Leads bought per day, last 7 days' }
    : { report: 'performance', figure: 'leads', heading: 'Leads, last 7 days', title: 'Leads per day, last 7 days' };
}

function tile(label: string, value: string, id: string): HTMLElement {
  return h('div', { class: 'tile', id }, h('div', { class: 'tile-label' }, label), h('div', { class: 'tile-value' }, value));
}

export async function overviewPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const today = daysAgo(0);
  const account = ctx.user.account;
  root.append(h('h1', {}, 'Overview'), h('p', { class: 'muted' }, `Today (UTC), ${today}. Signed in as ${ctx.user.email}.`));
  const chart = weekChart(account);
  const [perf, rev, week] = await Promise.all([
    get<Report>(reportPath('performance', { from: today, to: today, group_by: 'day' })),
    get<Report>(reportPath('revenue', { from: today, to: today, group_by: 'day' })),
    get<Report>(reportPath(chart.report, { from: daysAgo(6), to: today, group_by: 'day' })),
  ]);
  const totals = { performance: perf.data.totals ?? {}, revenue: rev.data.totals ?? {} };
  const shown = (t: Tile) => {
    const v = totals[t.report][t.figure];
    if (t.as === 'percent') return percent(v as number | null);
    return t.as === 'money' ? money(Number(v ?? 0), rev.data.currency) : count(Number(v ?? 0));
  };
  const points = fillDays(series(week.data.rows, 'day', chart.figure), daysAgo(6), today);
  // A week with nothing in it is no chart: it says what to do first.
  const none = points.every((p) => p.value === 0);
  const firstStep =
    account === 'seller'
      ? ['No leads yet — ', link('/settings/api-keys', 'make an API key'), ' and post your first lead; it shows here and under Leads.']
      : account === 'buyer'
        ? ['No purchases this week: leads you buy show here and under Leads.']
        : ['No leads this week: sellers post them with an ', link('/settings/api-keys', 'API key'), '; buyers take them once set up under ', link('/buyers', 'Buyers'), '.'];
  root.append(
    h('div', { class: 'tiles' }, overviewTiles(account).map((t) => tile(t.label, shown(t), t.id))),
    h('section', { class: 'card' }, h('h2', {}, chart.heading), none ? emptyState(...firstStep) : lineChart(points, chart.title, count)),
    h('p', {}, link('/leads', 'See the leads'), ' · ', link('/reports', 'Open the reports')),
  );
}
