import { describe, expect, it } from 'vitest';
import { MONEY_METRICS, METRICS, metricLabel, metricsFor, series } from '../src/report';

// The revenue report's returns of aged sales (docs/reoffers.md, "In the reports"): shown next to
// the aged sales, each reader only its own money.
describe('aged returns in the revenue report', () => {
  it('follows the aged sales with their returns, in the operator\'s columns', () => {
    const cols = METRICS.revenue;
    expect(cols.slice(cols.indexOf('aged_sales'))).toEqual([
      'aged_sales', 'aged_revenue', 'aged_payout', 'aged_margin', 'aged_returns', 'aged_returned_revenue', 'aged_returned_payout',
      'aged_net_revenue', 'aged_net_payout', 'aged_net_margin',
    ]);
  });
  it('shows a seller what it was paid back, a buyer what it was refunded, never the other side', () => {
    expect(metricsFor('revenue', 'seller')).toContain('aged_returned_payout');
    expect(metricsFor('revenue', 'seller')).not.toContain('aged_returned_revenue');
    expect(metricsFor('revenue', 'buyer')).toContain('aged_returned_revenue');
    expect(metricsFor('revenue', 'buyer')).not.toContain('aged_returned_payout');
    for (const account of ['seller', 'buyer'] as const) expect(metricsFor('revenue', account)).toContain('aged_returns');
  });
  it('reads the returned money as money and the returns as a count', () => {
    expect(MONEY_METRICS.has('aged_returned_revenue')).toBe(true);
    expect(MONEY_METRICS.has('aged_returned_payout')).toBe(true);
    expect(MONEY_METRICS.has('aged_returns')).toBe(false);
    expect(metricLabel('aged_returned_revenue', 'buyer')).toBe('aged refunded');
    expect(metricLabel('aged_returned_revenue', 'operator')).toBe('aged returned revenue');
    expect(metricLabel('aged_returns', 'seller')).toBe('aged returns');
  });
  it('charts the aged refunds of each row', () => {
    const rows = [{ day: '2026-11-01', aged_returned_revenue: '12.50' }, { day: '2026-11-02', aged_returned_revenue: '0.00' }];
    expect(series(rows, 'day', 'aged_returned_revenue')).toEqual([{ label: '2026-11-01', value: 12.5 }, { label: '2026-11-02', value: 0 }]);
  });
});
