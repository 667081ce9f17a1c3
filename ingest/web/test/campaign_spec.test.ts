import { describe, expect, it } from 'vitest';
import { curlOf, fieldRule, specFileName, specMarkdown } from '../src/pages/campaign_spec';

const spec = {
  campaign: { name: "Spring 'Auto' Q2", vertical: 'auto_insurance', mode: 'sync', sync_timeout_ms: 3000, rate_limit_per_minute: 600 },
  authentication: { how: 'the campaign key in SELLER_CAMPAIGN_KEY' },
  endpoints: [{ method: 'POST', path: '/api/v1/lead', what: 'post a lead', content_types: ['application/json'] }],
  fields: [
    { name: 'email_address', required: true, type: 'string', rule: 'an e-mail address', max_length: 254, values: [] },
    { name: 'credit_rating', required: false, type: 'enum', rule: 'self-reported', values: ['good', 'poor'] },
    { name: 'driver_age', required: false, type: 'integer', rule: '', min: 16, max: 99, values: [] },
  ],
  example_request: { SELLER_CAMPAIGN_KEY: 'YOUR_CAMPAIGN_KEY', last_name: "O'Brien" },
  examples: [{ when: 'over the ceiling', status: 429, headers: { 'Retry-After': '1' }, body: { status: 'rate_limited' } }],
};

describe('campaign specification', () => {
  it('says what a valid value is, with bounds and values', () => {
    expect(fieldRule(spec.fields[0])).toBe('an e-mail address; up to 254 characters');
    expect(fieldRule(spec.fields[1])).toBe('self-reported; one of: good, poor');
    expect(fieldRule(spec.fields[2])).toBe('16 to 99');
  });
  it('quotes the example body for a POSIX shell', () => {
    const curl = curlOf(spec, 'https://leads.example.com');
    expect(curl).toContain('https://leads.example.com/api/v1/lead');
    expect(curl).toContain(`"O'\\''Brien"`);
  });
  it('writes every field and answer into the Markdown', () => {
    const md = specMarkdown(spec, 'https://leads.example.com');
    expect(md).toContain('| `email_address` | yes | string | an e-mail address; up to 254 characters |');
    expect(md).toContain('### 429: over the ceiling');
    expect(md).toContain('Retry-After: 1');
    expect(md).toContain('`POST https://leads.example.com/api/v1/lead`');
  });
  it('names the file after the campaign', () => {
    expect(specFileName("Spring 'Auto' Q2")).toBe('spring-auto-q2-specification.md');
    expect(specFileName('')).toBe('campaign-specification.md');
  });
});
