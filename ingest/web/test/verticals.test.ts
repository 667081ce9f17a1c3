import { describe, expect, it } from 'vitest';
import { agedWords, consentWords, dedupeWords, delayLong, fieldsWords, hoursLong, overrideWords, overridesOf, overridesTitle, reofferWords, salesWords, timesWords, verticalRules } from '../src/pages/verticals';

// The Verticals page: each vertical's rules in words, as each reader was given them by the API.
describe("a vertical's rules in words", () => {
  const policy = { delays_seconds: [900, 7200, 86400], window_hours: 168 };

  it('says when and how often an unsold lead is offered again, and at what price for each reader', () => {
    expect(reofferWords(policy, 'operator')).toBe("Offered again after 15 min, 2 h, 1 day; at most 3 times within 7 days; aged price from each buyer's aged_price, else its aged bid.");
    expect(reofferWords({ delays_seconds: [60] }, 'seller')).toBe('Offered again after 1 min; at most once; a lead sold then pays you by your payout rule.');
    expect(reofferWords({ delays_seconds: [30, 172800], window_hours: 36 }, 'buyer')).toBe('Offered again after 30 s, 2 days; at most twice within 36 h; at your aged price, else the aged bid you answer, if your account takes aged leads.');
    expect(reofferWords(null, 'operator')).toBe('Not offered again: a lead nobody buys live is final.');
    expect(reofferWords({ delays_seconds: [] }, 'seller')).toBe('Not offered again: a lead nobody buys live is final.');
  });

  it('writes delays, windows and counts as a person would', () => {
    expect([90, 900, 3600, 86400, 172800].map(delayLong)).toEqual(['90 s', '15 min', '1 h', '1 day', '2 days']);
    expect([1, 24, 36, 48].map(hoursLong)).toEqual(['1 h', '1 day', '36 h', '2 days']);
    expect([1, 2, 10].map(timesWords)).toEqual(['once', 'twice', '10 times']);
  });

  it('says shared sales, duplicates, consent and the required fields', () => {
    expect(salesWords(1)).toBe('Sold to one buyer only.');
    expect(salesWords(3)).toBe('Sold to one buyer, or shared by up to 3 buyers.');
    expect(dedupeWords(0)).toBe('No duplicate check at intake.');
    expect(dedupeWords(1)).toBe('A lead with the e-mail or phone of one received in the last 1 day is a duplicate, not sold.');
    expect(dedupeWords(30)).toBe('A lead with the e-mail or phone of one received in the last 30 days is a duplicate, not sold.');
    expect(consentWords(30)).toBe("Sold only within 30 days of its receipt (the person's consent).");
    expect(fieldsWords([{ name: 'a' }, { name: 'home_owner', required: true }])).toBe('2 fields, 1 required: home_owner');
    expect(fieldsWords([{ name: 'a' }])).toBe('1 field, none required');
    expect(fieldsWords(undefined)).toBe('0 fields, none required');
  });

  it("writes only the rules the reader was given: a seller's no sharing, a buyer's no intake lookback", () => {
    const operator = { vertical: 'solar', fields: [], duplicate_lookback_days: 45, max_sales: 2, consent_days: 10, reoffer: policy };
    expect(verticalRules(operator, 'operator').map((r) => r.label)).toEqual(['Duplicates', 'Sales', 'Consent', 'Second chances']);
    const seller = { vertical: 'solar', fields: [], duplicate_lookback_days: 45, consent_days: 10, reoffer: policy };
    expect(verticalRules(seller, 'seller').map((r) => r.label)).toEqual(['Duplicates', 'Consent', 'Second chances']);
    const buyer = { vertical: 'solar', fields: [], max_sales: 2, consent_days: 10, reoffer: null };
    expect(verticalRules(buyer, 'buyer')).toEqual([
      { label: 'Sales', text: 'Sold to one buyer, or shared by up to 2 buyers.' },
      { label: 'Consent', text: "Sold only within 10 days of its receipt (the person's consent)." },
      { label: 'Second chances', text: 'Not offered again: a lead nobody buys live is final.' },
    ]);
  });

  it("names the vertical's campaigns with a policy of their own, none included, by name", () => {
    const campaigns = [
      { campaign_id: 'cp_1', name: 'Zeta', vertical: 'solar', reoffer: { delays_seconds: [60] } },
      { campaign_id: 'cp_2', name: 'Alpha', vertical: 'solar', reoffer: { delays_seconds: [] } },
      { campaign_id: 'cp_3', name: 'Follows', vertical: 'solar', reoffer: null },
      { campaign_id: 'cp_4', name: 'Other', vertical: 'legal', reoffer: { delays_seconds: [60] } },
      { campaign_id: 'cp_5', name: 'Old', vertical: 'solar' },
    ];
    expect(overridesOf(campaigns, 'solar').map((c) => c.campaign_id)).toEqual(['cp_2', 'cp_1']);
    expect(overridesOf(campaigns, 'mortgage')).toEqual([]);
    expect(overrideWords({ delays_seconds: [60, 3600], window_hours: 2 })).toBe('1 min, 1 h (within 2 h)');
    expect(overrideWords({ delays_seconds: [] })).toBe('not offered again');
    expect(overridesTitle('seller', true)).toBe('Your campaign overrides');
    expect(overridesTitle('operator', false)).toBe('Campaigns with their own second chances');
  });

  it("tells a buyer whether its account takes aged leads, and at what price", () => {
    expect(agedWords({ accepts_aged: true, pricing: { model: 'bid', aged_price: 2 } })).toBe('Your account takes aged leads, at $2.00 each.');
    expect(agedWords({ accepts_aged: true, pricing: { model: 'bid' } })).toBe('Your account takes aged leads, at the aged bid you answer.');
    expect(agedWords({ accepts_aged: false })).toBe('Your account takes no aged leads: the operator chooses whether it does.');
    expect(agedWords(null)).toBe('');
  });
});
