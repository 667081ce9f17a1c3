import { describe, expect, it } from 'vitest';
import { entryKind, filtered, ledgerPagePath, ledgerPath } from '../src/ledger';

// The page's address is the API's query: its filters, cursor and page size; From and To are the
// user's whole days, so the zone goes with them; the CSV holds the same filters from the start.
describe('ledger query', () => {
  it('sends the filters and the cursor, with the zone only for days', () => {
    const s = new URLSearchParams('buyer_id=by_1&kind=return&from=2026-11-01&to=2026-11-30&cursor=abc');
    expect(ledgerPath(s, 'Europe/Paris')).toBe('/v1/ledger?from=2026-11-01&to=2026-11-30&buyer_id=by_1&kind=return&tz=Europe%2FParis&limit=50&cursor=abc');
    expect(ledgerPath(new URLSearchParams('seller_id=sl_2'), 'Europe/Paris')).toBe('/v1/ledger?seller_id=sl_2&limit=50');
  });
  it('downloads the same filters as CSV, from the first entry', () => {
    const s = new URLSearchParams('buyer_id=by_1&from=2026-11-01&cursor=abc&limit=10');
    expect(ledgerPath(s, 'UTC', true)).toBe('/v1/ledger?from=2026-11-01&buyer_id=by_1&tz=UTC&format=csv');
  });
  it('starts a new choice of filters on its first page', () => {
    expect(ledgerPagePath({ buyer_id: 'by_1', seller_id: '', kind: 'sale', from: '', to: '2026-11-02', cursor: 'x' })).toBe('/ledger?to=2026-11-02&buyer_id=by_1&kind=sale');
    expect(ledgerPagePath({})).toBe('/ledger');
  });
  it('says what an entry is and whether the page is filtered', () => {
    expect(entryKind({ kind: 'sale' })).toBe('Sale');
    expect(entryKind({ kind: 'return' })).toBe('Return');
    expect(filtered(new URLSearchParams('cursor=x'))).toBe(false);
    expect(filtered(new URLSearchParams('kind=sale'))).toBe(true);
  });
});
