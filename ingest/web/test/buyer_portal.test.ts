import { describe, expect, it } from 'vitest';
import { buyerRates, csvHref, leadsTitle, limitLine, reasonLabel, returnFormError, returnRefusal, returnStanding } from '../src/buyer_portal';
import { overviewTiles } from '../src/pages/overview';
import { setZone } from '../src/zone';
import { buildBuyerBody } from '../src/buyer_form';

describe('a buyer\'s caps and budgets', () => {
  it('reads x of y with its share and when it resets', () => {
    setZone('UTC');
    const cap = limitLine({ period: 'daily', kind: 'cap', limit: 100, used: 12, since: '2026-11-27T00:00:00.000Z', resets_at: '2026-11-28T00:00:00.000Z' });
    expect(cap.label).toBe('Daily cap');
    expect(cap.text).toBe('12 of 100 leads');
    expect(cap.share).toBeCloseTo(0.12);
    expect(cap.resets).toBe('resets 2026-11-28 00:00:00');
    const budget = limitLine({ period: 'monthly', kind: 'budget', limit: 500, used: 612.5, since: '', resets_at: '2026-12-01T00:00:00.000Z' });
    expect(budget.text).toBe('$612.50 of $500.00');
    expect(budget.share).toBe(1);
    expect(limitLine({ period: 'hourly', kind: 'cap', limit: 0, used: 0, since: '', resets_at: '' }).share).toBe(1);
  });
  it('rates pings, bids, wins and accepted posts, and none without a ping', () => {
    expect(buyerRates({ pinged: 200, bids: 50, won: 10, delivered: 9 })).toEqual([
      ['Pings', '200'],
      ['Bid rate', '25.0%'],
      ['Win rate', '20.0%'],
      ['Accepted', '90.0%'],
    ]);
    expect(buyerRates({})[1]).toEqual(['Bid rate', '—']);
  });
  it('shows a buyer its returns on the overview and no seller figure', () => {
    const ids = overviewTiles('buyer').map((t) => t.id);
    expect(ids).toContain('tile-returns');
    expect(ids).not.toContain('tile-payout');
  });
});

describe('returning a lead from its page', () => {
  it('says before asking whether and until when it can be returned', () => {
    setZone('UTC');
    const w = { days: 7, ends_at: '2026-12-04T10:00:00.000Z', returnable: true, standing: 'open' as const, reasons: ['fraud'] };
    expect(returnStanding(w)).toBe('You can return this lead until 2026-12-04 10:00:00 (a 7-day window).');
    expect(returnStanding({ ...w, standing: 'window_ended', returnable: false })).toContain('ended on 2026-12-04 10:00:00');
    expect(returnStanding({ ...w, standing: 'no_returns', ends_at: null })).toContain('takes no returns');
    expect(returnStanding({ ...w, standing: 'returned' })).toBe('You returned this lead.');
  });
  it('explains each refusal in words', () => {
    setZone('UTC');
    expect(returnRefusal(409, 'the lead was already returned', { return: { returned_at: '2026-11-28T09:00:00.000Z' } })).toBe('You already returned this lead on 2026-11-28 09:00:00.');
    expect(returnRefusal(422, 'the return window of 7 days ended at 2026-11-20T00:00:00.000Z', null)).toBe('The return window ended on 2026-11-20 00:00:00: this lead can no longer be returned.');
    expect(returnRefusal(422, "this buyer's purchases cannot be returned (return window 0)", null)).toContain('takes no returns');
    expect(returnRefusal(404, 'no such lead', null)).toBe('no such lead');
  });
  it('asks a note for "other" and a reason always', () => {
    expect(returnFormError('', '')?.field).toBe('reason');
    expect(returnFormError('other', '  ')?.field).toBe('note');
    expect(returnFormError('other', 'wrong person')).toBeNull();
    expect(returnFormError('fraud', '')).toBeNull();
    expect(reasonLabel('invalid_phone')).toBe('Invalid phone');
  });
});

describe('the lead export link', () => {
  it('keeps the filters, drops the page, and names the zone of a day range', () => {
    expect(csvHref(new URLSearchParams('status=delivered&cursor=abc&limit=25&q='), 'Europe/Paris')).toBe('/v1/leads?status=delivered&format=csv');
    expect(csvHref(new URLSearchParams('created_from=2026-11-01&created_to=2026-11-27'), 'Europe/Paris')).toBe('/v1/leads?created_from=2026-11-01&created_to=2026-11-27&tz=Europe%2FParis&format=csv');
  });
  it('calls a buyer\'s leads its purchases', () => {
    expect(leadsTitle('buyer')).toBe('Purchases');
    expect(leadsTitle('seller')).toBe('Leads');
  });
});

describe('the operator\'s self-service option', () => {
  it('is sent as booleans under self_service', () => {
    expect(buildBuyerBody({ name: 'Acme', 'self_service.caps': 'true', 'self_service.filters': 'false' }).body).toEqual({ name: 'Acme', self_service: { caps: true, filters: false } });
  });
});
