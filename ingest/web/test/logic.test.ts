import { describe, expect, it } from 'vitest';
import { toApiError, query } from '../src/api';
import { BUYER_FIELDS, buildBuyerBody, toText } from '../src/buyer_form';
import { linePoints, niceScale, shortLabel } from '../src/chart';
import { assignErrors, fieldForError } from '../src/form';
import { count, counted, dateTime, daysAgo, duration, money, percent, splitList } from '../src/format';
import { METRICS, filtersFor, fillDays, groupLabel, groupsFor, kindsFor, metricLabel, metricsFor, reportPath, rowLabel, series, unsoldLabel, unsoldSeries } from '../src/report';
import { overviewTiles, weekChart } from '../src/pages/overview';
import { matchPath, route } from '../src/router';
import { campaignBody } from '../src/pages/campaigns';

describe('api errors', () => {
  it('reads a problem body with field errors', () => {
    const e = toApiError(400, { title: 'Bad Request', detail: 'the buyer is invalid', errors: [{ field: 'delivery.ping_url', code: 'invalid_format', message: 'must be an http or https URL' }] });
    expect(e.status).toBe(400);
    expect(e.message).toBe('the buyer is invalid');
    expect(e.fields).toEqual([{ field: 'delivery.ping_url', code: 'invalid_format', message: 'must be an http or https URL' }]);
  });
  it('survives bodies that are not problems', () => {
    expect(toApiError(502, null).message).toBe('HTTP 502');
    expect(toApiError(401, { status: 'invalid', message: 'no' }).message).toBe('no');
    expect(toApiError(400, { errors: [{ nofield: 1 }, 'x'] }).fields).toEqual([]);
  });
  it('builds query strings from the set values only', () => {
    expect(query({ a: 'x y', b: '', c: undefined, d: 0 })).toBe('?a=x+y&d=0');
    expect(query({})).toBe('');
  });
});

describe('form errors', () => {
  const names = ['name', 'delivery.ping_url', 'filters.custom', 'filters'];
  it('puts an error at its field or its nearest parent', () => {
    expect(fieldForError(names, 'delivery.ping_url')).toBe('delivery.ping_url');
    expect(fieldForError(names, 'filters.custom[0].op')).toBe('filters.custom');
    expect(fieldForError(names, 'filters.states')).toBe('filters');
    expect(fieldForError(names, 'caps.daily')).toBeNull();
    expect(fieldForError(names, 'named')).toBeNull();
  });
  it('groups messages, the rest under ""', () => {
    const g = assignErrors(names, [
      { field: 'name', message: 'required' },
      { field: 'filters.custom[1].op', message: 'unknown operator' },
      { field: 'body', message: 'bad' },
    ]);
    expect(g.get('name')).toEqual(['required']);
    expect(g.get('filters.custom')).toEqual(['[1].op: unknown operator']);
    expect(g.get('')).toEqual(['body: bad']);
  });
});

describe('buyer form', () => {
  it('makes the nested body and leaves empty fields out', () => {
    const { body, errors } = buildBuyerBody({
      name: ' Acme ', verticals: 'auto_insurance, solar,', 'delivery.ping_url': 'https://a.example/ping', 'delivery.timeout_ms': '800',
      'pricing.model': 'bid', 'pricing.min_bid': '2.5', 'filters.custom': '[{"field":"age","op":"gte","value":18}]', 'caps.daily': '',
    });
    expect(errors).toEqual([]);
    expect(body).toEqual({
      name: 'Acme', verticals: ['auto_insurance', 'solar'], delivery: { ping_url: 'https://a.example/ping', timeout_ms: 800 },
      pricing: { model: 'bid', min_bid: 2.5 }, filters: { custom: [{ field: 'age', op: 'gte', value: 18 }] },
    });
  });
  it('sends a group emptied on an edit as null, which clears it', () => {
    const { body } = buildBuyerBody({ name: 'Acme', 'caps.daily': '5' }, true);
    expect(body).toEqual({ name: 'Acme', caps: { daily: 5 }, filters: null, schedule: null });
    expect(buildBuyerBody({ name: 'Acme' }).body).toEqual({ name: 'Acme' });
  });
  it('refuses numbers and JSON it cannot read, on their fields', () => {
    const { errors } = buildBuyerBody({ priority: 'high', schedule: '{nope' });
    expect(errors.map((e) => e.field)).toEqual(['priority', 'schedule']);
  });
  it('shows values as text and covers the whole contract', () => {
    const f = (n: string) => BUYER_FIELDS.find((x) => x.name === n)!;
    expect(toText(f('verticals'), ['a', 'b'])).toBe('a, b');
    expect(toText(f('delivery.headers'), {})).toBe('');
    expect(toText(f('caps.daily'), 0)).toBe('0');
    for (const n of ['name', 'status', 'verticals', 'tier', 'priority', 'weight', 'max_concurrency', 'duplicate_lookback_days', 'return_window_days', 'max_return_rate',
      'delivery.mode', 'delivery.ping_url', 'delivery.post_url', 'delivery.timeout_ms', 'delivery.headers', 'delivery.mapping',
      'pricing.model', 'pricing.price', 'pricing.min_bid', 'pricing.shared_price', 'accepts_aged', 'pricing.aged_price', 'filters.states', 'filters.exclude_states', 'filters.zip_prefixes',
      'filters.sources', 'filters.custom', 'schedule', 'caps.hourly', 'caps.daily', 'caps.weekly', 'caps.monthly', 'caps.daily_budget', 'caps.monthly_budget'])
      expect(f(n)).toBeDefined();
  });
});

describe('campaign form', () => {
  it('sends the names POST /v1/campaigns takes', () => {
    expect(campaignBody({ seller_id: 'sl_1', vertical: 'solar', name: 'Web', status: 'active', mode: 'async', sync_timeout_ms: '', rate_limit_per_minute: '60', 'payout.model': 'revshare', 'payout.value': '70' }, true)).toEqual({
      seller_id: 'sl_1', vertical: 'solar', name: 'Web', status: 'active', mode: 'async', rate_limit_per_minute: 60, payout: { model: 'revshare', value: 70 },
    });
    expect(campaignBody({ seller_id: 'sl_1', vertical: 'solar', name: '', status: 'paused', mode: '', 'payout.value': '' }, false)).toEqual({ status: 'paused' });
  });
});

describe('charts', () => {
  it('picks nice scales', () => {
    expect(niceScale(0)).toEqual({ top: 1, step: 0.25 });
    expect(niceScale(7)).toEqual({ top: 8, step: 2 });
    expect(niceScale(95)).toEqual({ top: 100, step: 50 });
    expect(niceScale(1234)).toEqual({ top: 1500, step: 500 });
    expect(niceScale(0.3).top).toBeCloseTo(0.3);
    expect(niceScale(1, 4, true)).toEqual({ top: 1, step: 1 });
    expect(niceScale(3, 4, true)).toEqual({ top: 3, step: 1 });
    expect(niceScale(0, 4, true)).toEqual({ top: 1, step: 1 });
    expect(niceScale(38, 4, true)).toEqual({ top: 40, step: 10 });
  });
  it('places points across the plot, y downwards', () => {
    expect(linePoints([{ label: 'a', value: 0 }, { label: 'b', value: 10 }, { label: 'c', value: 5 }], 100, 50, 10)).toEqual([[0, 50], [50, 0], [100, 25]]);
    expect(linePoints([{ label: 'a', value: 4 }], 100, 50, 8)).toEqual([[50, 25]]);
  });
  it('shortens labels', () => {
    expect(shortLabel('2026-11-26')).toBe('11-26');
    expect(shortLabel('2026-11-26T13:00:00Z')).toBe('26 13:00');
    expect(shortLabel('a-very-long-buyer-name')).toBe('a-very-long-b…');
  });
});

describe('reports by account', () => {
  it('offers a seller no buyer and none of the buyers\' money', () => {
    expect(kindsFor('seller')).toEqual(['performance', 'revenue', 'unsold']);
    for (const kind of kindsFor('seller')) expect(groupsFor(kind, 'seller')).not.toContain('buyer');
    expect(groupsFor('unsold', 'seller')).toContain('reason');
    expect(groupsFor('revenue', 'seller')).toEqual(['day', 'hour', 'vertical', 'source', 'seller', 'campaign']);
    expect(filtersFor('seller')).toEqual(['vertical', 'source', 'campaign_id']);
    expect(metricsFor('revenue', 'seller')).toEqual(['leads_sold', 'payout', 'returns', 'returned_payout', 'aged_sales', 'aged_payout', 'aged_returns', 'aged_returned_payout', 'aged_net_payout']);
    expect(metricsFor('performance', 'seller')).toEqual(['leads', 'sold', 'unsold', 'duplicates', 'invalid', 'acceptance_rate']);
  });
  it('offers a buyer its own purchases by source code, never a campaign, payout or margin', () => {
    expect(kindsFor('buyer')).toEqual(['performance', 'revenue']);
    expect(groupsFor('revenue', 'buyer')).toEqual(['day', 'hour', 'buyer', 'vertical', 'source', 'seller']);
    expect(groupLabel('seller', 'buyer')).toBe('source code');
    expect(filtersFor('buyer')).toEqual(['vertical', 'source']);
    expect(metricsFor('revenue', 'buyer')).toEqual(['leads_sold', 'revenue', 'avg_price', 'gross_revenue', 'returns', 'returned_revenue', 'aged_sales', 'aged_revenue', 'aged_returns', 'aged_returned_revenue', 'aged_net_revenue']);
    expect(metricsFor('performance', 'buyer')).not.toContain('leads');
    expect(metricsFor('performance', 'buyer')).toContain('delivered');
    expect(metricLabel('revenue', 'buyer')).toBe('spend');
    expect(metricLabel('leads_sold', 'buyer')).toBe('leads bought');
    expect(metricLabel('gross_revenue', 'operator')).toBe('gross revenue');
    expect(rowLabel({ source_code: 'src_abcdefghijkl', revenue: 1 }, 'seller')).toBe('src_abcdefghijkl');
  });
  it('offers the operator everything', () => {
    for (const kind of kindsFor('operator')) expect(metricsFor(kind, 'operator')).toEqual(METRICS[kind]);
    expect(groupsFor('revenue', 'operator')).toContain('buyer');
    expect(filtersFor('operator')).toContain('buyer_id');
  });
  it('shows each account its own money on the overview', () => {
    const money = (a: 'operator' | 'seller' | 'buyer') => overviewTiles(a).filter((t) => t.as === 'money').map((t) => [t.label, t.figure]);
    expect(money('operator')).toEqual([['Revenue', 'revenue']]);
    expect(money('seller')).toEqual([['Payout', 'payout']]);
    expect(money('buyer')).toEqual([['Spend', 'revenue']]);
    // Every tile's figure is one its reader is answered.
    for (const a of ['operator', 'seller', 'buyer'] as const)
      for (const t of overviewTiles(a)) expect(metricsFor(t.report, a)).toContain(t.figure);
    expect(metricsFor(weekChart('buyer').report, 'buyer')).toContain(weekChart('buyer').figure);
    expect(metricsFor(weekChart('seller').report, 'seller')).toContain(weekChart('seller').figure);
  });
});

describe('reports', () => {
  it('asks the API with the chosen range and grouping', () => {
    expect(reportPath('revenue', { from: '2026-11-01', to: '2026-11-07', group_by: 'buyer' })).toBe('/v1/reports/revenue?from=2026-11-01&to=2026-11-07&group_by=buyer');
    expect(reportPath('performance', { from: '2026-11-01', to: '2026-11-01', group_by: 'day', vertical: 'solar' }, true)).toBe('/v1/reports/performance?from=2026-11-01&to=2026-11-01&group_by=day&vertical=solar&format=csv');
  });
  it('labels rows and orders breakdowns largest first', () => {
    const rows = [{ buyer_id: 'b1', revenue: 5 }, { buyer_id: 'b2', revenue: 9 }, { buyer_id: null, revenue: 1 }];
    expect(series(rows, 'buyer', 'revenue').map((p) => p.label)).toEqual(['b2', 'b1', '(none)']);
    expect(series([{ day: '2026-11-02', leads: 3 }, { day: '2026-11-01', leads: 4 }], 'day', 'leads').map((p) => p.label)).toEqual(['2026-11-02', '2026-11-01']);
    expect(rowLabel({ vertical: 'solar' }, 'vertical')).toBe('solar');
  });
  it('labels unsold rows by reason, after their group, and sums them largest first', () => {
    expect(reportPath('unsold', { from: '2026-11-01', to: '2026-11-07', group_by: 'buyer' })).toBe('/v1/reports/unsold?from=2026-11-01&to=2026-11-07&group_by=buyer');
    expect(unsoldLabel({ reason: 'no_bid', leads: 4 }, 'reason')).toBe('no_bid');
    expect(unsoldLabel({ buyer_id: 'b1', reason: 'filter:states', leads: 2 }, 'buyer')).toBe('b1 · filter:states');
    const rows = [
      { day: '2026-11-01', reason: 'no_bid', leads: 2 },
      { day: '2026-11-01', reason: 'refused', leads: 5 },
      { day: '2026-11-01', reason: 'no_bid', leads: 4 },
    ];
    expect(unsoldSeries(rows, 'day')).toEqual([
      { label: '2026-11-01 · no_bid', value: 6 },
      { label: '2026-11-01 · refused', value: 5 },
    ]);
  });
  it('gives every day of a range a point, zero when it has no row', () => {
    expect(fillDays([{ label: '2026-11-25', value: 4 }], '2026-11-24', '2026-11-26')).toEqual([
      { label: '2026-11-24', value: 0 }, { label: '2026-11-25', value: 4 }, { label: '2026-11-26', value: 0 },
    ]);
    expect(fillDays([], '2026-11-26', '2026-11-25')).toEqual([]);
  });
});

describe('formats', () => {
  it('writes money, counts, rates, times', () => {
    expect(money(1234567.5)).toBe('$1,234,567.50');
    expect(money(-3)).toBe('-$3.00');
    expect(money(null)).toBe('—');
    expect(count(12345)).toBe('12,345');
    expect(counted(1, 'buyer')).toBe('1 buyer');
    expect(counted(0, 'buyer')).toBe('0 buyers');
    expect(counted(1200, 'entry', 'entries')).toBe('1,200 entries');
    expect(percent(0.4567)).toBe('45.7%');
    expect(percent(null)).toBe('—');
    expect(dateTime('2026-11-26T01:02:03.456Z')).toBe('2026-11-26 01:02:03');
    expect(duration(250)).toBe('250 ms');
    expect(duration(2500)).toBe('2.50 s');
    expect(daysAgo(1, new Date('2026-11-26T00:30:00Z'))).toBe('2026-11-25');
    expect(splitList('a, b,\n c,,')).toEqual(['a', 'b', 'c']);
  });
});

describe('router', () => {
  it('matches patterns with parameters', () => {
    expect(matchPath('/leads/:id', '/leads/ld_1')).toEqual({ id: 'ld_1' });
    expect(matchPath('/leads/:id', '/leads')).toBeNull();
    expect(matchPath('/', '/')).toEqual({});
    expect(route(['/buyers/new', '/buyers/:id'], '/buyers/new')?.pattern).toBe('/buyers/new');
    expect(route(['/buyers/new', '/buyers/:id'], '/buyers/by_2')?.params).toEqual({ id: 'by_2' });
    expect(route(['/'], '/nowhere')).toBeNull();
  });
});
