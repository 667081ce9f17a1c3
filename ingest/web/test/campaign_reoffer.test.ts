import { describe, expect, it } from 'vitest';
import { delayWords, reofferBody, reofferChoice, reofferText } from '../src/pages/campaign_reoffer';
import { campaignBody } from '../src/pages/campaigns';

// A campaign's own re-offer policy: the list's words and the form's body (the API judges it).
describe("a campaign's own re-offer policy", () => {
  it('reads as its vertical\'s, none, or its delays', () => {
    expect(reofferText(null)).toBe("vertical's");
    expect(reofferText(undefined)).toBe("vertical's");
    expect(reofferText({ delays_seconds: [] })).toBe('none');
    expect(reofferText({ delays_seconds: [900, 7200, 86400], window_hours: 48 })).toBe('15 min, 2 h, 1 d (within 48 h)');
    expect(delayWords(90)).toBe('90 s');
    expect(reofferChoice(null)).toBe('vertical');
    expect(reofferChoice({ delays_seconds: [] })).toBe('none');
    expect(reofferChoice({ delays_seconds: [60] })).toBe('own');
  });

  it('makes the body: null for the vertical\'s, no delays for none, the numbers as typed', () => {
    expect(reofferBody({ reoffer: 'vertical' })).toBeNull();
    expect(reofferBody({ reoffer: 'none', 'reoffer.delays_seconds': '60' })).toEqual({ delays_seconds: [] });
    expect(reofferBody({ reoffer: 'own', 'reoffer.delays_seconds': '60, 3600', 'reoffer.window_hours': '' })).toEqual({ delays_seconds: [60, 3600] });
    expect(reofferBody({ reoffer: 'own', 'reoffer.delays_seconds': '60,x', 'reoffer.window_hours': '2' })).toEqual({ delays_seconds: [60, NaN], window_hours: 2 });
    // A new campaign names no policy unless it has its own; an edit always says which.
    expect(campaignBody({ status: 'active', reoffer: 'vertical' }, true)).toEqual({ status: 'active', seller_id: undefined, vertical: undefined });
    expect(campaignBody({ status: 'active', reoffer: 'vertical' }, false)).toEqual({ status: 'active', reoffer: null });
    expect(campaignBody({ status: 'active', reoffer: 'none' }, true).reoffer).toEqual({ delays_seconds: [] });
  });
});
