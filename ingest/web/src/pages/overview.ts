import { Ctx } from '../app';
import { lineChart } from '../chart';
import { ApiError, get } from '../api';
import { button, emptyState, field, h, input, link } from '../dom';
import { FormErrors } from '../form';
import { count, daysAgo, money, percent, rangeError } from '../format';
import { PRESETS, Preset, Range, addDays, daysIn, presetRange, previousRange, zone } from '../zone';
import { Account, Row, fillDays, reportPath, series } from '../report';
import { buyerRates } from '../buyer_portal';
import { Account as BuyerAccount, limitBars } from './buying';
import { throttle } from '../live';
import { liveFeed } from './live_feed';

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
      { id: 'tile-returns', label: 'Returns', report: 'revenue', figure: 'returns', as: 'count' },
    ];
  return [
    { id: 'tile-leads', label: 'Leads', report: 'performance', figure: 'leads', as: 'count' },
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

/** The range the overview's address asks for (`range`, and `from`/`to` for a custom one), in
 *  whole days of the user ending `today`; a custom range that is not one is today. */
export function overviewRange(search: URLSearchParams, today: string): { preset: Preset; range: Range } {
  const asked = search.get('range') as Preset | null;
  if (asked === 'custom') {
    const from = search.get('from') ?? '';
    const to = search.get('to') ?? '';
    if (from && to && !rangeError(from, to) && daysIn(from, to) <= 400) return { preset: 'custom', range: { from, to } };
  }
  const preset = asked === '7d' || asked === '30d' ? asked : 'today';
  return { preset, range: presetRange(preset, today) };
}

/** How a range reads: "today", "the last 7 days", "2026-11-01 to 2026-11-05". */
export function rangeText(preset: Preset, r: Range): string {
  if (preset === 'today') return 'today';
  if (preset !== 'custom') return `the last ${daysIn(r.from, r.to)} days`;
  return r.from === r.to ? r.from : `${r.from} to ${r.to}`;
}

/** A figure as its tile shows it. */
export function tileValue(t: Tile, totals: Row, currency: string): string {
  const v = totals[t.figure];
  if (t.as === 'percent') return percent(v as number | null);
  return t.as === 'money' ? money(Number(v ?? 0), currency) : count(Number(v ?? 0));
}

function tile(t: Tile, value: string, before: string, beforeText: string): HTMLElement {
  return h(
    'div',
    { class: 'tile', id: t.id },
    h('div', { class: 'tile-label' }, t.label),
    h('div', { class: 'tile-value' }, value),
    h('div', { class: 'tile-before' }, `${beforeText}: `, h('span', { class: 'tile-before-value' }, before)),
  );
}

/** Today, 7 days, 30 days, or a custom range of whole days (From, To included), for the page at
 *  `path` (its address says the range as the overview's does). */
export function rangePicker(ctx: Ctx, preset: Preset, r: Range, path = '/', label = 'Overview range'): HTMLElement {
  const from = field('from', 'From', input({ type: 'date', value: r.from }));
  const to = field('to', 'To (included)', input({ type: 'date', value: r.to }));
  const errors = new FormErrors([from, to]);
  const presets = h(
    'div',
    { class: 'presets', role: 'group', 'aria-label': 'Range' },
    PRESETS.filter(([p]) => p !== 'custom').map(([p, name]) => button(name, () => ctx.go(p === 'today' ? path : `${path}?range=${p}`), { type: 'button', class: 'secondary', 'aria-pressed': String(p === preset) })),
  );
  const form = h('form', { class: 'range-picker', 'aria-label': label, novalidate: true }, presets, from.wrapper, to.wrapper, h('button', { type: 'submit', class: preset === 'custom' ? '' : 'secondary', 'aria-pressed': String(preset === 'custom') }, 'Custom range'), errors.element);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const wrong = !from.control.value || !to.control.value ? 'Choose both days' : rangeError(from.control.value, to.control.value);
    if (wrong) return errors.show(new ApiError(400, wrong, [{ field: 'to', message: wrong }]));
    if (daysIn(from.control.value, to.control.value) > 400) return errors.show(new ApiError(400, 'at most 400 days', [{ field: 'to', message: 'a range spans at most 400 days' }]));
    ctx.go(`${path}?range=custom&from=${from.control.value}&to=${to.control.value}`);
  });
  return form;
}

export async function overviewPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const tz = zone();
  const today = daysAgo(0);
  const { preset, range } = overviewRange(ctx.search, today);
  const before = previousRange(range);
  const account = ctx.user.account;
  root.append(
    h('h1', {}, 'Overview'),
    h('p', { class: 'muted' }, `${rangeText(preset, range) === 'today' ? `Today, ${today}` : `From ${range.from} to ${range.to}`} (days in ${tz}). Signed in as ${ctx.user.email}.`),
    rangePicker(ctx, preset, range),
  );
  // The chart: the range by day, or the last 7 days when the range is shorter.
  const chart = weekChart(account);
  const span = daysIn(range.from, range.to) >= 7 ? range : { from: addDays(range.to, -6), to: range.to };
  const ask = (report: 'performance' | 'revenue', r: Range) => get<Report>(reportPath(report, { from: r.from, to: r.to, group_by: 'day', tz }));
  // Four reports when the range is the chart's (its days are those rows), five otherwise.
  const [perf, rev, perfBefore, revBefore, ownWeek, own] = await Promise.all([
    ask('performance', range),
    ask('revenue', range),
    ask('performance', before),
    ask('revenue', before),
    span === range ? null : ask(chart.report, span),
    // A buyer's caps and budgets, with what it bought in each one's current period.
    account === 'buyer' ? get<{ data: BuyerAccount }>('/v1/account') : null,
  ]);
  const week = ownWeek ?? (chart.report === 'performance' ? perf : rev);
  const now = { performance: perf.data.totals ?? {}, revenue: rev.data.totals ?? {} };
  const then = { performance: perfBefore.data.totals ?? {}, revenue: revBefore.data.totals ?? {} };
  const beforeText = preset === 'today' ? 'Yesterday' : `Previous ${daysIn(before.from, before.to)} days`;
  const heading = span.from === addDays(today, -6) && span.to === today ? chart.heading : `${chart.heading.split(',')[0]}, ${span.from} to ${span.to}`;
  const firstStep =
    account === 'seller'
      ? ['No leads yet — ', link('/settings/api-keys', 'make an API key'), ' and post your first lead; it shows here and under Leads. Or ', link('/get-started', 'get started step by step', { id: 'get-started' }), ': a key, a command to copy, your lead arriving.']
      : account === 'buyer'
        ? ['No purchases in these days: leads you buy show here and under Leads.']
        : ['No leads in these days: sellers post them with an ', link('/settings/api-keys', 'API key'), '; buyers take them once set up under ', link('/buyers', 'Buyers'), '.'];
  // The chart's days, or, for a range with nothing in it, what to do first instead.
  const chartBody = (w: Report) => {
    const points = fillDays(series(w.data.rows, 'day', chart.figure), span.from, span.to);
    return points.every((p) => p.value === 0) ? emptyState(...firstStep) : lineChart(points, chart.title, count);
  };
  const chartCard = h('section', { class: 'card', id: 'overview-chart' }, h('h2', {}, heading), chartBody(week));
  root.append(
    h('div', { class: 'tiles' }, overviewTiles(account).map((t) => tile(t, tileValue(t, now[t.report], rev.data.currency), tileValue(t, then[t.report], revBefore.data.currency), beforeText))),
    chartCard,
  );
  if (own) {
    const rates = buyerRates(now.performance);
    root.append(
      h('div', { class: 'grid2' },
        h('section', { class: 'card', id: 'buyer-rates' }, h('h2', {}, 'Pings and wins'), h('dl', { class: 'props' }, rates.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])), h('p', { class: 'muted small' }, 'Bid rate: pings you bid on. Win rate: bids that won the lead. Accepted: posts you took.')),
        h('section', { class: 'card', id: 'buyer-limits' }, h('h2', {}, 'Caps and budgets'), limitBars(own.data.limits), h('p', {}, link('/buying', own.data.status === 'paused' ? 'Buying is paused: resume it' : 'Buying settings'))),
      ),
    );
  }
  root.append(h('p', {}, link('/leads', account === 'buyer' ? 'See your purchases' : 'See the leads'), ' · ', link('/reports', 'Open the reports')));
  // The live feed; while the range runs to today, each lead it brings reads the totals (and the
  // chart's days) again, at most every 3 s, and the tiles and the chart change in place.
  const refresh = throttle(() => {
    if (range.to !== daysAgo(0) || !root.isConnected) return;
    void Promise.all([ask('performance', range), ask('revenue', range), span === range ? null : ask(chart.report, span)])
      .then(([p, r, w]) => {
        const totals = { performance: p.data.totals ?? {}, revenue: r.data.totals ?? {} };
        for (const t of overviewTiles(account)) {
          const el = root.querySelector(`#${t.id} .tile-value`);
          if (el) el.textContent = tileValue(t, totals[t.report], r.data.currency);
        }
        chartCard.replaceChildren(h('h2', {}, heading), chartBody(w ?? (chart.report === 'performance' ? p : r)));
      })
      .catch(() => {});  // the next event tries again; the feed's state says if the server is gone
  }, 3000);
  // Under the tiles it moves, above the chart.
  const feed = liveFeed(ctx, refresh);
  const tiles = root.querySelector('.tiles');
  if (tiles) tiles.after(feed);
  else root.append(feed);
}
