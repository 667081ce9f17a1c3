import { get } from '../api';
import { Ctx } from '../app';
import { lineChart } from '../chart';
import { h, link } from '../dom';
import { count, daysAgo, money, percent } from '../format';
import { Row, fillDays, reportPath, series } from '../report';

interface Report {
  data: { rows: Row[]; totals: Row; currency: string };
}

function tile(label: string, value: string, id: string): HTMLElement {
  return h('div', { class: 'tile', id }, h('div', { class: 'tile-label' }, label), h('div', { class: 'tile-value' }, value));
}

export async function overviewPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const today = daysAgo(0);
  root.append(h('h1', {}, 'Overview'), h('p', { class: 'muted' }, `Today (UTC), ${today}. Signed in as ${ctx.user.email}.`));
  const [perf, rev, week] = await Promise.all([
    get<Report>(reportPath('performance', { from: today, to: today, group_by: 'day' })),
    get<Report>(reportPath('revenue', { from: today, to: today, group_by: 'day' })),
    get<Report>(reportPath('performance', { from: daysAgo(6), to: today, group_by: 'day' })),
  ]);
  const p = perf.data.totals ?? {};
  const r = rev.data.totals ?? {};
  root.append(
    h(
      'div',
      { class: 'tiles' },
      tile("Today's leads", count(Number(p.leads ?? 0)), 'tile-leads'),
      tile('Sold', count(Number(p.sold ?? 0)), 'tile-sold'),
      tile('Revenue', money(Number(r.revenue ?? 0), rev.data.currency), 'tile-revenue'),
      tile('Acceptance rate', percent(p.acceptance_rate as number | null), 'tile-acceptance'),
    ),
    h('section', { class: 'card' }, h('h2', {}, 'Leads, last 7 days'), lineChart(fillDays(series(week.data.rows, 'day', 'leads'), daysAgo(6), today), 'Leads per day, last 7 days', count)),
    h('p', {}, link('/leads', 'See the leads'), ' · ', link('/reports', 'Open the reports')),
  );
}
