import { describe, expect, it } from 'vitest';
import { campaignBody } from '../src/pages/campaigns';
import { TEST_FILTER, isTestStatus, testBadge } from '../src/test_mode';

describe('test mode', () => {
  it('draws no badge for a real lead or a record out of test mode', () => {
    expect(testBadge(false)).toBeNull();
    expect(testBadge(undefined)).toBeNull();
    expect(testBadge('true')).toBeNull(); // only the API's boolean
    expect(testBadge(false, 'mode')).toBeNull();
  });
  it('sends the campaign form’s test mode as a boolean, and nothing when the form has none', () => {
    expect(campaignBody({ status: 'active', test_mode: 'true' }, false)).toEqual({ status: 'active', test_mode: true });
    expect(campaignBody({ status: 'active', test_mode: 'false' }, false)).toEqual({ status: 'active', test_mode: false });
    expect(campaignBody({ status: 'paused' }, false)).toEqual({ status: 'paused' });
  });
  it('says a test lead’s status once, by its Test badge', () => {
    expect(isTestStatus({ test: true, status: 'test' })).toBe(true);
    expect(isTestStatus({ test: true, status: 'pending' })).toBe(false); // pending, and Test
    expect(isTestStatus({ test: false, status: 'unsold' })).toBe(false);
  });
  it('filters the list by the API’s test values', () => {
    expect(TEST_FILTER.map(([v]) => v)).toEqual(['', 'true', 'false']);
  });
});
