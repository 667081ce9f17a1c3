import { describe, expect, it } from 'vitest';
import { StatementLine, adjustmentNote, lineKind, moneyColumns, ownParty, statementFile, statementPath, statementTitle, totalRows } from '../src/statements';

const line = (extra: Partial<StatementLine> = {}): StatementLine => ({
  entry_id: 1, kind: 'sale', settled: false, lead_id: 'ld_1', at: '2026-10-20T12:00:00Z', adjustment: false,
  home_period: '2026-10', ref_period: '2026-10', ref_at: '2026-10-20T12:00:00Z', ...extra,
});

describe('statements', () => {
  it('asks the API for a statement, and its CSV, by period and account', () => {
    expect(statementPath('2026-10')).toBe('/v1/statements?period=2026-10');
    expect(statementPath('2026-W43', 'seller', 'sl_1', true)).toBe('/v1/statements?party=seller&id=sl_1&period=2026-W43&format=csv');
    expect(statementFile({ party: 'buyer', account_id: 'by_1', period: '2026-10' })).toBe('statement_buyer_by_1_2026-10.csv');
    expect(statementTitle('buyer')).toBe('Invoice');
    expect(statementTitle('seller')).toBe('Payout statement');
    expect(ownParty('buyer')).toBe('buyer');
    expect(ownParty('operator')).toBeUndefined();
  });

  it('shows only the totals and money columns the answer holds', () => {
    // A buyer's answer: its amounts, no payout, no margin.
    const buyer = totalRows({ sales: 2, returns: 1, adjustments: 1, sales_amount: 30, returns_amount: -15, adjustments_amount: -15, total: 15 });
    expect(buyer.map(([label]) => label)).toEqual(['Purchases', 'Returns', 'Of which adjustments (earlier periods)', 'Total due']);
    const seller = totalRows({ sales: 2, returns: 0, adjustments: 0, payouts: 21, reversals: 0, adjustments_payout: 0, total_payout: 21 });
    expect(seller.map(([, , key]) => key)).toEqual(['payouts', 'reversals', 'adjustments_payout', 'total_payout']);
    expect(totalRows({ total: 1, total_payout: 1, margin: 0 }).map(([, , k]) => k)).toEqual(['total', 'total_payout', 'margin']);
    expect(moneyColumns([line({ amount: 15 })])).toEqual([['amount', 'Amount']]);
    expect(moneyColumns([line({ payout: 10.5 })])).toEqual([['payout', 'Payout']]);
    expect(moneyColumns([])).toEqual([]);
  });

  it('says what each line is and why an adjustment is one', () => {
    expect(lineKind(line())).toBe('Sale');
    expect(lineKind(line({ settled: true }))).toBe('Settled sale');
    expect(lineKind(line({ kind: 'return' }))).toBe('Return');
    expect(adjustmentNote(line(), '2026-10')).toBe('');
    expect(adjustmentNote(line({ kind: 'return', adjustment: true, home_period: '2026-11' }), '2026-11')).toBe('Adjustment: returns a sale of 2026-10');
    expect(adjustmentNote(line({ adjustment: true }), '2026-11')).toBe('Adjustment: a sale of 2026-10; dated in 2026-10, closed before it was written');
    expect(adjustmentNote(line({ settled: true, adjustment: true, home_period: '2026-11' }), '2026-11')).toBe('Adjustment: settles a lead of 2026-10');
  });
});
