import { ApiError, get } from '../api';
import { FormErrors } from '../form';
import { Ctx, isOperator } from '../app';
import { barChart, lineChart } from '../chart';
import { emptyState, field, h, input, link, select, table } from '../dom';
import { count, counted, daysAgo, money, percent, rangeError } from '../format';
import { zone } from '../zone';
import { MONEY_METRICS, csvName, ReportKind, ReportParams, Row, TIME_GROUPS, filtersFor, fillDays, groupLabel, groupsFor, kindsFor, metricLabel, metricsFor, reportPath, rowLabel, series, unsoldSeries } from '../report';

export function formatMetric(metric: string, v: unknown, currency = 'USD'): string {
  if (v === null || v === undefined) return '—';
  const n = Number(v);
  if (MONEY_METRICS.has(metric)) return money(n, currency);
  if (metric === 'acceptance_rate') return percent(n);
  if (metric.endsWith('_ms')) return `${Math.round(n)} ms`;
  return count(n);
}

export async function reportsPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const s = ctx.search;
  // Only the reports, groupings, filters and figures the signed-in account may use.
  const account = ctx.user.account;
  const kinds = kindsFor(account);
  const asked = s.get('kind') as ReportKind;
  const kind: ReportKind = kinds.includes(asked) ? asked : 'performance';
  const groups = groupsFor(kind, account);
  const allowed = filtersFor(account);
  const filter = (name: string) => (allowed.includes(name) && s.get(name)) || undefined;
  const params: ReportParams & Record<string, string | undefined> = {
    from: s.get('from') || daysAgo(6),
    to: s.get('to') || daysAgo(0),
    group_by: s.get('group_by') || (kind === 'unsold' ? 'reason' : 'day'),
    // Days and hours in the user's zone unless the address names another.
    tz: s.get('tz') || zone(),
    vertical: filter('vertical'),
    source: filter('source'),
    buyer_id: filter('buyer_id'),
    campaign_id: filter('campaign_id'),
  };
  const metrics = metricsFor(kind, account);
  const fallback = kind === 'revenue' ? (account === 'seller' ? 'payout' : 'revenue') : account === 'buyer' ? 'delivered' : 'leads';
  const metric = metrics.includes(s.get('metric') ?? '') ? s.get('metric')! : fallback;
  const kindNames: Record<ReportKind, string> = { performance: 'Performance', revenue: account === 'buyer' ? 'Spend' : account === 'seller' ? 'Payout' : 'Revenue', unsold: 'Unsold' };
  const fields = [
    field('kind', 'Report', select(kinds.map((k) => [k, kindNames[k]] as [string, string]), kind)),
    field('from', 'From', input({ type: 'date', value: params.from })),
    field('to', 'To (included)', input({ type: 'date', value: params.to })),
    field('group_by', 'Group by', select(groups.map((g) => [g, groupLabel(g, account)] as [string, string]), params.group_by)),
    field('metric', 'Chart', select(metrics.map((m) => [m, metricLabel(m, account)] as [string, string]), metric)),
    field('vertical', 'Vertical', input({ value: params.vertical ?? '' })),
  ];
  const errors = new FormErrors(fields);
  const form = h('form', { class: 'filters', 'aria-label': 'Report range and grouping', novalidate: true }, errors.element, fields.map((f) => f.wrapper), h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Show')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const wrong = rangeError(fields[1].control.value, fields[2].control.value);
    if (wrong) return errors.show(new ApiError(400, wrong, [{ field: 'to', message: wrong }]));
    const q = new URLSearchParams();
    for (const f of fields) if (f.control.value) q.set(f.name, f.control.value);
    if (f_kindChanged(kind, q)) {
      q.delete('metric');
      q.delete('group_by');
    }
    if (params.campaign_id) q.set('campaign_id', params.campaign_id);
    ctx.go(`/reports?${q}`);
  });
  const heading = `${kindNames[kind]} report`;
  root.append(h('h1', {}, heading), h('p', { class: 'muted' }, `Days and hours in ${params.tz}, both ends of the range included.`), form);
  if (params.campaign_id) root.append(h('p', {}, `Campaign ${params.campaign_id} only. `, link('/reports', 'All campaigns')));

  const rep = await get<{ data: { rows: Row[]; totals: Row; currency: string; group_by: string[] | string } }>(reportPath(kind, params));
  if (!rep.data.rows.length) root.append(emptyState('No leads in this range. Choose a wider range, or another report, then Show.'));
  const group = params.group_by.split(',')[0];
  const names = await groupNames(ctx, group);
  if (names.size) for (const r of rep.data.rows) if (typeof r[`${group}_id`] === 'string') r[`${group}_id`] = names.get(r[`${group}_id`] as string) ?? r[`${group}_id`];
  if (kind === 'unsold') return unsoldReport(root, kind, params, rep.data);
  let points = series(rep.data.rows, group, metric);
  // A day report over dates (the usual case) shows the days with no lead as zeros.
  if (group === 'day' && /^\d{4}-\d{2}-\d{2}$/.test(params.from) && /^\d{4}-\d{2}-\d{2}$/.test(params.to) && !params.group_by.includes(','))
    points = fillDays(points, params.from, params.to);
  const title = `${metricLabel(metric, account)} by ${groupLabel(group, account)}, ${params.from} to ${params.to}`;
  const fmt = (v: number) => formatMetric(metric, v, rep.data.currency);
  root.append(
    h('section', { class: 'card chart-card' }, h('h2', {}, title), TIME_GROUPS.includes(group) ? lineChart(points, title, fmt) : barChart(points, title, fmt)),
    h('p', {}, h('a', { href: reportPath(kind, params, true), download: csvName(kind, params.from, params.to), class: 'button secondary', id: 'csv' }, 'Download CSV')),
  );
  const cols = metrics;
  const rows = rep.data.rows.map((r) => [rowLabel(r, group), ...cols.map((c) => formatMetric(c, r[c], rep.data.currency))]);
  const totals = rep.data.totals ?? {};
  rows.push([h('strong', {}, 'Total'), ...cols.map((c) => h('strong', {}, formatMetric(c, totals[c], rep.data.currency)))] as any);
  root.append(table([groupLabel(group, account), ...cols.map((c) => metricLabel(c, account))], rows, counted(rep.data.rows.length, 'row'), undefined, 'report-table'));
}

// Why leads went unsold: leads per reason (after the group's value when grouped by more), as a
// bar chart largest first and a table; the totals say what was counted.
function unsoldReport(root: HTMLElement, kind: ReportKind, params: ReportParams, data: { rows: Row[]; totals: Row }): void {
  const group = params.group_by.split(',')[0];
  const title = `unsold leads by ${group === 'reason' ? 'reason' : `${group} and reason`}, ${params.from} to ${params.to}`;
  const perBuyer = data.totals?.counts === 'buyers';
  root.append(
    h('p', {}, perBuyer
      ? 'Each unsold lead counts once under each buyer that could have had it, by why that buyer did not take it.'
      : 'Each unsold lead counts once, by how far its auction got.'),
    h('section', { class: 'card chart-card' }, h('h2', {}, title), barChart(unsoldSeries(data.rows, group), title, (v) => count(v))),
    h('p', {}, h('a', { href: reportPath(kind, params, true), download: csvName(kind, params.from, params.to), class: 'button secondary', id: 'csv' }, 'Download CSV')),
  );
  // Of those leads, how many were offered again (second chances) and how many of them sold aged.
  const figures = ['leads', 'reoffered', 'sold_aged'];
  const headers = [...(group === 'reason' ? ['reason'] : [group, 'reason']), 'leads', 'offered again', 'sold aged'];
  const rows = data.rows.map((r) => [...(group === 'reason' ? [] : [rowLabel(r, group)]), String(r.reason ?? '(none)'), ...figures.map((f) => count(Number(r[f] ?? 0)))]);
  rows.push([h('strong', {}, 'Total'), ...(group === 'reason' ? [] : ['']), ...figures.map((f) => h('strong', {}, count(Number(data.totals?.[f] ?? 0))))] as any);
  root.append(table(headers, rows, counted(data.rows.length, 'row'), undefined, 'report-table'));
}

// A new report kind has other metrics and groupings: the chart's metric and the grouping start
// again from their defaults.
function f_kindChanged(kind: string, q: URLSearchParams): boolean {
  return (q.get('kind') ?? 'performance') !== kind;
}

// The names of buyers, sellers or campaigns, for an operator's breakdown (others see ids).
async function groupNames(ctx: Ctx, group: string): Promise<Map<string, string>> {
  const source: Record<string, [string, string]> = { buyer: ['/v1/buyers?limit=100', 'buyer_id'], seller: ['/v1/sellers', 'seller_id'], campaign: ['/v1/campaigns', 'campaign_id'] };
  if (!isOperator(ctx.user) || !source[group]) return new Map();
  try {
    const [path, id] = source[group];
    const list = await get<{ data: Record<string, string>[] }>(path);
    return new Map(list.data.map((x) => [x[id], x.name]));
  } catch {
    return new Map();
  }
}
