import { describe, expect, it } from 'vitest';
import { auditQuery, shownValue } from '../src/pages/change_log';

// A field's before and after as the change log shows them.
describe('change log values', () => {
  it('shows text as it is, an absent value as a dash and the rest as JSON', () => {
    expect(shownValue('paused')).toBe('paused');
    expect(shownValue(null)).toBe('—');
    expect(shownValue(undefined)).toBe('—');
    expect(shownValue(1500)).toBe('1500');
    expect(shownValue(false)).toBe('false');
    expect(shownValue(['auto_insurance', 'solar'])).toBe('["auto_insurance","solar"]');
    expect(shownValue('(secret)')).toBe('(secret)');
  });
});

// From and To are the user's whole days: the zone goes with them, as with the lead list.
describe('change log query', () => {
  it('sends the user\'s zone with a From or To, and none without', () => {
    const q = auditQuery(new URLSearchParams('q=Acme&from=2026-11-01&to=2026-11-01'), 'America/New_York');
    expect(q).toMatchObject({ q: 'Acme', from: '2026-11-01', to: '2026-11-01', tz: 'America/New_York', limit: '50' });
    expect(auditQuery(new URLSearchParams('to=2026-11-01'), 'Pacific/Kiritimati').tz).toBe('Pacific/Kiritimati');
    expect(auditQuery(new URLSearchParams('q=Acme'), 'America/New_York').tz).toBeUndefined();
  });
});
