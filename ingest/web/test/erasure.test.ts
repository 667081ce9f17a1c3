import { describe, expect, it } from 'vitest';
import { eraseQuestion, erasedText } from '../src/pages/lead_erase';

// An erased lead says so at the top of its page, in the reader's zone; a lead not erased says
// nothing.
describe('erased lead', () => {
  it('says when its personal data was erased, in the reader\'s zone', () => {
    expect(erasedText('2026-11-29T23:30:00.000Z', 'UTC')).toMatch(/^Personal data erased on 2026-11-29 23:30:00\./);
    expect(erasedText('2026-11-29T23:30:00.000Z', 'Pacific/Kiritimati')).toMatch(/^Personal data erased on 2026-11-30 13:30:00\./);
    expect(erasedText(undefined)).toBeNull();
    expect(erasedText('')).toBeNull();
    expect(erasedText(null)).toBeNull();
  });
  it('asks the operator to confirm, naming the lead and what stays', () => {
    const q = eraseQuestion('ld_1');
    expect(q).toContain('ld_1');
    expect(q).toContain('money and reports stay');
  });
});
