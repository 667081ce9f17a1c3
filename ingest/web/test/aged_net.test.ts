import { describe, expect, it } from 'vitest';
import { campaignPayouts, payoutColumns, payoutFigure, payoutLabel } from '../src/payouts';
import { MONEY_METRICS, METRICS, metricLabel, metricsFor } from '../src/report';

// The aged band net of its returns (docs/reoffers.md, "In the reports"): in the revenue report
// after the aged returns, each reader only its own side; on a seller's Payouts page, its aged
// payout, what of it was reversed, and the net.
describe('the aged net figures', () => {
  it('follow the aged returns in the operator\'s columns, as money', () => {
    expect(METRICS.revenue.slice(-4)).toEqual(['aged_returned_payout', 'aged_net_revenue', 'aged_net_payout', 'aged_net_margin']);
    for (const m of ['aged_net_revenue', 'aged_net_payout', 'aged_net_margin']) {
      expect(MONEY_METRICS.has(m)).toBe(true);
      expect(metricsFor('revenue', 'operator')).toContain(m);
    }
  });
  it('give a seller its net payout and a buyer its net spend, never the other side or the margin', () => {
    const seller = metricsFor('revenue', 'seller');
    expect(seller).toContain('aged_net_payout');
    expect(seller).not.toContain('aged_net_revenue');
    expect(seller).not.toContain('aged_net_margin');
    const buyer = metricsFor('revenue', 'buyer');
    expect(buyer).toContain('aged_net_revenue');
    expect(buyer).not.toContain('aged_net_payout');
    expect(buyer).not.toContain('aged_net_margin');
    expect(metricLabel('aged_net_revenue', 'buyer')).toBe('aged net spend');
    expect(metricLabel('aged_net_margin', 'operator')).toBe('aged net margin');
  });
});

describe('the seller\'s payouts of aged sales', () => {
  it('shows the aged payout, what was reversed and the net, before the net payout', () => {
    const cols = payoutColumns();
    expect(cols.slice(cols.indexOf('aged_sales'))).toEqual(['aged_sales', 'aged_payout', 'aged_returns', 'aged_returned_payout', 'aged_net_payout', 'payout']);
    for (const never of ['aged_revenue', 'aged_margin', 'aged_returned_revenue', 'aged_net_revenue', 'aged_net_margin']) expect(cols).not.toContain(never);
    expect(cols.map(payoutLabel).slice(-5)).toEqual(['Payout of aged sales', 'Aged sales returned', 'Aged payout reversed', 'Aged payout (net)', 'Payout (net)']);
  });
  it('reads the aged returns as a count and the reversed and net payouts as money', () => {
    const totals = { aged_sales: 2, aged_payout: 7.5, aged_returns: 1, aged_returned_payout: 2.45, aged_net_payout: 5.05 };
    expect(Object.entries(totals).map(([m, v]) => payoutFigure(m, v, 'USD'))).toEqual(['2', '$7.50', '1', '$2.45', '$5.05']);
    // A day that only gave back an aged sale made before it: a negative net.
    expect(payoutFigure('aged_net_payout', -2.45, 'USD')).toBe('-$2.45');
    expect(payoutFigure('aged_returned_payout', 1234.5, 'EUR')).toBe('EUR 1,234.50');
    expect(payoutFigure('aged_returns', null, 'USD')).toBe('—');
  });
  it('keeps each campaign\'s aged figures with its row', () => {
    const rows = campaignPayouts([{ campaign_id: 'cm_a', payout: 3, aged_net_payout: 0 }, { campaign_id: 'cm_b', payout: 9, aged_net_payout: 2.45 }], new Map([['cm_b', 'Spring']]));
    expect(rows.map((r) => [r.name, r.figures.aged_net_payout])).toEqual([['Spring', 2.45], [null, 0]]);
  });
});
