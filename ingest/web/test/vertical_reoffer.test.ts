import { describe, expect, it } from 'vitest';
import { reofferSourceWords } from '../src/pages/vertical_reoffer';
import { verticalRules } from '../src/pages/verticals';

// A vertical's second chances on its page: where the policy in force comes from.
describe("a vertical's re-offer policy set by the operator", () => {
  it('says where the policy comes from, and what the file says under one set here', () => {
    expect(reofferSourceWords({ reoffer_source: 'configured', configured_reoffer: null })).toBe('From the LEADFLOW_VERTICALS file, as read at start.');
    expect(reofferSourceWords({ reoffer_source: 'operator', reoffer_set_at: '2026-11-30T04:30:12.345Z', configured_reoffer: { delays_seconds: [900, 7200], window_hours: 48 } })).toBe(
      'Set here on 2026-11-30 04:30 UTC; the LEADFLOW_VERTICALS file says: 15 min, 2 h (within 48 h).',
    );
    expect(reofferSourceWords({ reoffer_source: 'operator', configured_reoffer: null })).toBe('Set here; the LEADFLOW_VERTICALS file says: none.');
  });

  it("names a policy set by the operator among the vertical's rules; a seller is not told", () => {
    const set = { vertical: 'solar', reoffer: { delays_seconds: [60] }, reoffer_source: 'operator' };
    expect(verticalRules(set, 'operator').map((r) => r.label)).toEqual(['Second chances (set by the operator)']);
    expect(verticalRules({ vertical: 'solar', reoffer: { delays_seconds: [60] } }, 'seller').map((r) => r.label)).toEqual(['Second chances']);
  });
});
