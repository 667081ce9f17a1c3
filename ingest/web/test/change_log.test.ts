import { describe, expect, it } from 'vitest';
import { shownValue } from '../src/pages/change_log';

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
