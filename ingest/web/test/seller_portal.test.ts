import { describe, expect, it } from 'vitest';
import { sentence, unsoldHint, unsoldWhy } from '../src/unsold';
import { distributionPairs } from '../src/lead_view';

// Why a seller's lead was not sold: the API's seller words as sentences, never another reason.
describe('unsold reasons in seller words', () => {
  const unsold = (extra: Record<string, unknown> = {}) => ({ lead_id: 'ld_1', status: 'unsold', vertical: 'solar', distribution: { delivery_status: 'unsold', reason: 'no buyer bid on the lead' }, ...extra });

  it('makes the API\'s words a sentence', () => {
    expect(sentence('no buyer bid on the lead')).toBe('No buyer bid on the lead.');
    expect(sentence('Already one.')).toBe('Already one.');
    expect(sentence('  ')).toBe('');
  });

  it('explains an unsold lead with its reason and what kept buyers from it, sorted as given', () => {
    const why = unsoldWhy(unsold({ ineligible_reasons: ["a buyer's cap was reached", "the lead did not match a buyer's filters"], offers: { pings: 0, posts: 0 } }));
    expect(why).toEqual({ headline: 'No buyer bid on the lead.', details: ["A buyer's cap was reached.", "The lead did not match a buyer's filters."] });
  });

  it('says no buyer was buying the vertical when the lead was offered to none and none was ruled out', () => {
    const l = unsold({ distribution: { reason: 'no buyer takes leads like this one now' }, ineligible_reasons: [], offers: { pings: 0, posts: 0 } });
    expect(unsoldWhy(l)!.headline).toBe('No buyer was buying the solar vertical when it arrived.');
    // Offered to a buyer, or a buyer ruled out: the API's words, not that.
    expect(unsoldWhy({ ...l, offers: { pings: 1, posts: 0 } })!.headline).toBe('No buyer takes leads like this one now.');
    expect(unsoldWhy({ ...l, ineligible_reasons: ['outside a buyer\'s hours'] })!.headline).toBe('No buyer takes leads like this one now.');
    // The list row holds no offers: no such guess there.
    expect(unsoldHint(l)).toBe('No buyer takes leads like this one now.');
  });

  it('leaves a seller\'s withheld buyer and its reason out of the distribution card (the reason has its own)', () => {
    const labels = distributionPairs({ status: 'unsold', distribution: { buyer_id: null, reason: 'no buyer bid on the lead', payout: null } }, 'seller').map(([k]) => k);
    expect(labels).not.toContain('Buyer');
    expect(labels).not.toContain('Reason');
    expect(distributionPairs({ distribution: { buyer_id: 'by_1', reason: 'no bids' } }, 'operator').map(([k]) => k)).toEqual(expect.arrayContaining(['Buyer', 'Reason']));
  });

  it('explains refused, failed and duplicate leads, never sold, returned or pending ones', () => {
    expect(unsoldWhy({ status: 'duplicate', distribution: { reason: 'duplicate of an earlier lead' } })!.headline).toBe('Duplicate of an earlier lead.');
    expect(unsoldWhy({ status: 'failed', distribution: {} })!.headline).toBe('No reason given.');
    for (const status of ['delivered', 'returned', 'pending']) {
      expect(unsoldWhy({ status, distribution: { reason: 'x' } })).toBeNull();
      expect(unsoldHint({ status, distribution: { reason: 'x' } })).toBeNull();
    }
    expect(unsoldHint({ status: 'unsold', distribution: {} })).toBeNull();
  });
});
